#!/bin/bash
# Review 5: a process whose leader thread has exited while another thread
# runs (a "zombie leader") is skipped by cgroup.kill (docs/cleanup.md says
# so, and the live cleanup's /proc walk kills it by pid). But the kill of a
# SIGKILLed shellsup's leaf, by `shellsup sweep` (which both bindings run
# with the leaf the start frame named, and every start-up sweep), is
# cgroup.kill alone on a v2 leaf: the process survives the sweep, and the
# sweep leaves the leaf. Here as `--user nobody` from a root harness (the
# recommended tier), in the default cgroup tier; the harness's SIGKILL of
# shellsup stands in for the OOM killer (which a command can steer at
# shellsup: docs/tiers.md, oom_score_adj). A private v2 parent is used.
# Usage (root): zombie-leader-survives-sweep.sh     ZOMBIE=0: the control (an ordinary process: swept)
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
P=/sys/fs/cgroup/unified/review5-v2; mkdir -p $P
CMD='python3 -c "
import ctypes, os, threading, time
def run():
    end = time.time() + 40
    while time.time() < end: time.sleep(0.2)
threading.Thread(target=run).start()
open(\"/tmp/review5-zl.pid\",\"w\").write(str(os.getpid()))
if os.environ.get(\"ZOMBIE\",\"1\") == \"1\":
    ctypes.CDLL(None).syscall(60, 0)   # SYS_exit: the leader thread alone
" & sleep 60'
rm -f /tmp/review5-zl.pid
ZOMBIE=${ZOMBIE:-1} timeout 60 "$BIN" --no-login --cgroup $P --user nobody --cwd /tmp -- "$CMD" & S=$!
for i in $(seq 50); do [ -s /tmp/review5-zl.pid ] && break; sleep 0.1; done; sleep 0.3
Z=$(cat /tmp/review5-zl.pid); echo "target pid $Z: $(grep -E '^(State|Threads)' /proc/$Z/status | tr '\n\t' '  ')"
echo "leaf: $(ls -d $P/shellsup-* )"
SH=$(pgrep -P $S -x shellsup); kill -9 $SH; wait $S 2>/dev/null; echo "shellsup ($SH) SIGKILLed"
timeout 20 "$BIN" sweep --cgroup $P; echo "sweep rc=$?"
sleep 1
live=$(for t in /proc/$Z/task/*; do st=$(sed 's/.*) //' $t/stat 2>/dev/null | cut -c1); [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && echo "${t##*/}:$st"; done)
if [ -n "$live" ]; then echo "ALIVE after the sweep: pid $Z (uid $(stat -c %u /proc/$Z)), live threads: $live"; else echo "held: nothing of pid $Z runs (at most a zombie awaiting its reaper)"; fi
# clean up: kill what is left through the kernel's PID, remove the leaves
[ -d /proc/$Z ] && kill -9 $Z; sleep 0.5 # the kernel pid we read from our own run
for s in $P/*/; do [ -d "$s" ] && { cat $s/cgroup.procs | while read p; do kill -9 $p; done; sleep 0.3; rmdir "$s"; }; done
rmdir $P; rm -f /tmp/review5-zl.pid
