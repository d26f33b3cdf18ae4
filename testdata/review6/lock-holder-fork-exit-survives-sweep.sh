#!/bin/bash
# Review 6: a command keeps its leaf from being swept after its shellsup is
# SIGKILLed, with no cgroup write at all. A process of the command waits in
# a blocking flock(LOCK_EX) on its own leaf's directory; the moment the
# SIGKILLed shellsup's descriptor closes, the kernel hands it the lock. It
# forks and exits: the child keeps the open file description, and so the
# lock, but /proc/locks in the initial PID namespace still names the pid
# that took it (fs/locks.c locks_translate_pid shows flc_pid raw there,
# "even if the owner is dead"). cgroup/held_linux.go lockedByLive then finds
# a holder that is "not a member" (memberOf of a gone pid is false) and
# says a live shellsup holds the leaf: `shellsup sweep` leaves it, and the
# command's processes run on.
# Here `--user nobody` from a root harness (the recommended tier) in a
# private v2 parent; the harness's SIGKILL of shellsup stands in for the
# OOM killer. MODE=plain is the control (the same survivor without the lock).
# Usage (root): lock-holder-fork-exit-survives-sweep.sh [--user nobody|root]
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
WHO=${1:-nobody}
P=/sys/fs/cgroup/unified/review6-v2; mkdir -p $P
PF=/tmp/review6-lh; rm -f $PF.*
USERARGS="--user nobody --cwd /tmp"; [ "$WHO" = root ] && USERARGS="--cwd /tmp"
CMD='setsid timeout 45 python3 -c "
import fcntl, os, time
leaf = \"/sys/fs/cgroup/unified\" + [l for l in open(\"/proc/self/cgroup\") if l.startswith(\"0::\")][0][3:].strip()
fd = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY)
open(\"'$PF'.taker\", \"w\").write(str(os.getpid()))
if os.environ.get(\"MODE\", \"lock\") == \"lock\":
    fcntl.flock(fd, fcntl.LOCK_EX)     # blocks until shellsup is gone
    if os.fork():
        os._exit(0)                    # the taker exits; its child keeps the lock
open(\"'$PF'.holder\", \"w\").write(str(os.getpid()))
time.sleep(40)
" </dev/null >/dev/null 2>&1 & sleep 60'
MODE=${MODE:-lock} timeout 60 "$BIN" --no-login --cgroup $P $USERARGS -- "$CMD" & S=$!
for i in $(seq 50); do [ -s $PF.taker ] && break; sleep 0.1; done; sleep 0.3
LEAF=$(ls -d $P/shellsup-*); echo "leaf: $LEAF"
SH=$(pgrep -P $S -x shellsup); kill -9 $SH; wait $S 2>/dev/null; echo "shellsup ($SH) SIGKILLed"
for i in $(seq 30); do [ -s $PF.holder ] && break; sleep 0.1; done
echo "/proc/locks for the leaf: $(grep ":$(stat -c %i $LEAF) " /proc/locks)  (taker $(cat $PF.taker), holder $(cat $PF.holder 2>/dev/null))"
timeout 20 "$BIN" sweep --cgroup $P; echo "sweep rc=$?"
sleep 1
H=$(cat $PF.holder 2>/dev/null)
if [ -n "$H" ] && [ -d /proc/$H ] && [ "$(sed 's/.*) //' /proc/$H/stat | cut -c1)" != Z ]; then
  echo "BROKEN: pid $H (uid $(stat -c %u /proc/$H)) ALIVE after the sweep, in $(grep ^0:: /proc/$H/cgroup); the leaf $( [ -d $LEAF ] && echo 'is still there' || echo 'is gone')"
else echo "held: nothing runs"; fi
# clean up: the pids our own run recorded, then the leaf and the parent
for p in $(cat $LEAF/cgroup.procs 2>/dev/null); do kill -9 $p; done
[ -n "$H" ] && [ -d /proc/$H ] && kill -9 $H; sleep 0.5
for s in $P/*/; do [ -d "$s" ] && rmdir "$s"; done
rmdir $P; rm -f $PF.*
