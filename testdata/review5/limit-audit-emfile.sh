#!/bin/bash
# Review 5: the cleanup's audit (cgroup/audit_linux.go Missing) gives up,
# silently, when it cannot read a leaf's cgroup.procs ("nothing can be
# told"). A same-uid command that can name shellsup (no --pidns: the CLI
# run as nobody with a delegated v1 cgroup) lowers shellsup's
# RLIMIT_NOFILE (5:5 is enough), so that read fails with EMFILE: the
# command moved wholly out of its memory leaf, alive at the cleanup (a
# setsid sleeper too), is not reported. The cleanup itself still finishes.
# Usage (root): limit-audit-emfile.sh [5:5|3:3|0:0]   NOFILE=0: the control (reported)
set -u
N=${1:-5:5}
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
D=/sys/fs/cgroup/memory/review5-nofile
mkdir -p $D && chown nobody:nogroup $D $D/cgroup.procs $D/tasks
CMD='P=$(grep :memory: /proc/self/cgroup|cut -d: -f3); U=/sys/fs/cgroup/memory$(dirname $P)
echo $$ > $U/cgroup.procs; (setsid sleep 30 &)
[ '${NOFILE:-1}' = 1 ] && prlimit --pid $PPID --nofile='$N' && echo "shellsup: $(grep "open files" /proc/$PPID/limits)"
echo "bash (out of the leaf, in $(grep :memory: /proc/self/cgroup|cut -d: -f3)) exits"; sleep 1'
timeout 40 bash -c 'echo $$ > '$D'/cgroup.procs; cd /tmp; HOME=/nonexistent exec setpriv --reuid nobody --regid nogroup --clear-groups "$0" --no-login --max-memory 32M -- "$1"' "$BIN" "$CMD"; echo rc=$?
sleep 0.5; for s in $D/*/; do [ -d "$s" ] && rmdir "$s"; done; rmdir $D
