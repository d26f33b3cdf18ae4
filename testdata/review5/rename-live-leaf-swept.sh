#!/bin/bash
# Review 5: a sweep kills a LIVE run whose v1 leaf a neighbour renamed.
# Both runs are nobody's, under --pidns-auto (the bindings' default), in a
# nobody-owned (delegated) v1 memory cgroup: the attacker A cannot see or
# signal B's processes (another PID namespace). But v1 cgroups can be
# renamed within their parent, and the parent is the uid's: A renames B's
# leaf to a leaf name of a shellsup that never existed (pid 99999, above
# pid_max; the namespaces and boot of B's name, read from the name). The
# next sweep in that parent (here `shellsup sweep`; also the start-up sweep
# of any later run there, and both bindings' sweep after an unreported
# run) judges the leaf by its name, finds pid 99999 gone, and SIGKILLs
# every member: B's live command. B ends "killed by SIGKILL", with nothing
# in its result about why.
# Usage (root): rename-live-leaf-swept.sh     RENAME=0: the control (B finishes)
#   SWEEPER=run: the sweeper is the start-up sweep of a later ordinary run
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
D=/sys/fs/cgroup/memory/review5-sweep
mkdir -p $D && chown nobody:nogroup $D $D/cgroup.procs $D/tasks
asnobody() { timeout 30 bash -c 'echo $$ > '$D'/cgroup.procs; cd /tmp; HOME=/nonexistent exec setpriv --reuid nobody --regid nogroup --clear-groups "$@"' nobody "$@"; }
asnobody "$BIN" --no-login --pidns-auto --max-memory 64M -- 'sleep 6; echo B finished' > /tmp/review5-B.out 2>&1 &
B=$!; sleep 1
A='own=$(basename $(grep :memory: /proc/self/cgroup | cut -d: -f3)); cd '$D'
for d in shellsup-*-*-*-*-*; do
  [ "$d" = "$own" ] && continue
  IFS=- read -r _ pid start ns tns boot <<< "$d"
  if [ '${RENAME:-1}' = 1 ]; then mv "$d" "shellsup-99999-$start-$ns-$tns-$boot" && echo "A renamed $d (pid $pid: not visible here: $(kill -0 $pid 2>&1))"; fi
done'
asnobody "$BIN" --no-login --pidns-auto --max-memory 64M -- "$A"
if [ "${SWEEPER:-sweep}" = run ]; then asnobody "$BIN" --no-login --pidns-auto --max-memory 64M -- "echo C: a later run"; else asnobody "$BIN" sweep; fi
wait $B; echo "B: rc=$?"; cat /tmp/review5-B.out
sleep 0.5; for s in $D/*/; do [ -d "$s" ] && rmdir "$s"; done; rmdir $D; rm -f /tmp/review5-B.out
