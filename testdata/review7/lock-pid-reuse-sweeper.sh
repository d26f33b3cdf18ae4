#!/bin/bash
# Review 7: the sixth review's fix (cgroup/held_linux.go lockedByLive: a
# lock counts for a live shellsup only when a pid /proc/locks names for it
# is not in the leaf and has the leaf's directory open) is beaten by pid
# reuse with the sweeper itself. After shellsup is SIGKILLed, a process of
# the command (nobody, no cgroup write) takes a *shared* flock on its leaf.
# It then opens the leaf 19000 times (RLIMIT_NOFILE is 20000) and forks a
# child per descriptor that takes a shared lock through it and exits: the
# parent keeps every descriptor, so every lock, and /proc/locks names 19000
# consecutive dead pids. It forks throwaway children until ns_last_pid
# (world-readable) is just below the first of them. The next processes the
# host starts get those pids. When one is a sweep, lockedByLive opens the
# leaf, gets EWOULDBLOCK, finds its own pid among the takers, and checks
# /proc/SELF/fd: the sweeper is not in the leaf and has the leaf open (its
# own probe). "A live shellsup holds it": the leaf is left, its process
# alive. Every later sweep whose pid falls in the range is fooled the same
# way (and the command can re-arm the range).
# The harness waits with builtins only, so the sweep is its next fork; a
# busy host only moves it further into the 19000-pid range.
# R7_N=33000 (root: it may raise its RLIMIT_NOFILE) would name every pid, so that
# every later sweep is fooled (not confirmed: arming took over the 120 s wait
# under this host's load); SWEEPS=K runs K more sweeps after the first.
# Usage (root): [R7_N=…] [SWEEPS=…] lock-pid-reuse-sweeper.sh [nobody|root]
[ -z "${R7_BOUNDED:-}" ] && R7_BOUNDED=1 exec timeout 180 "$0" "$@"
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
WHO=${1:-nobody}
P=/sys/fs/cgroup/unified/review7-v2; mkdir -p $P
PF=/tmp/review7-pr; rm -f $PF.*; mkfifo $PF.fifo; chmod 666 $PF.fifo
USERARGS="--user nobody --cwd /tmp"; [ "$WHO" = root ] && USERARGS="--cwd /tmp"
CMD='setsid timeout 130 python3 -c "
import fcntl, os, time
leaf = \"/sys/fs/cgroup/unified\" + [l for l in open(\"/proc/self/cgroup\") if l.startswith(\"0::\")][0][3:].strip()
fd = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY)
open(\"'$PF'.taker\", \"w\").write(str(os.getpid()))
fcntl.flock(fd, fcntl.LOCK_SH)         # blocks until shellsup is gone
open(\"'$PF'.holder\", \"w\").write(str(os.getpid()))
import resource
want = int(os.environ.get(\"R7_N\", \"19000\"))
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(hard, want + 100),) * 2)   # root may raise it
except (OSError, ValueError):
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
last = lambda: int(open(\"/proc/sys/kernel/ns_last_pid\").read())
start, keep, n = last() + 1, [], 0
while len(keep) < want:               # each child takes a shared lock and exits:
    try:                               # /proc/locks names it, this process keeps the fd
        f = os.open(leaf, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        break
    p = os.fork()
    if p == 0:
        fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        os._exit(0)
    os.waitpid(p, 0)
    keep.append(f)
for i in range(60000 if want < 32000 else 0):  # hard cap; wrap to just before the named pids
    if (last() - (start - 1)) % 32768 < 1000:
        break
    p = os.fork()
    if p == 0:
        os._exit(0)
    os.waitpid(p, 0)
open(\"'$PF'.ready\", \"w\").write(\"%d pids named from %d; counter at %d\" % (len(keep), start, last()))
time.sleep(60)
" </dev/null >/dev/null 2>&1 & sleep 130'
R7_N=${R7_N:-19000} timeout 140 "$BIN" --no-login --cgroup $P $USERARGS -- "$CMD" & S=$!
for i in $(seq 50); do [ -s $PF.taker ] && break; sleep 0.1; done; sleep 0.3
LEAF=$(ls -d $P/shellsup-*); echo "leaf: $LEAF"
SH=$(pgrep -P $S -x shellsup); kill -9 $SH; wait $S 2>/dev/null; echo "shellsup ($SH) SIGKILLed"
T=$(cat $PF.taker)
exec 9<>$PF.fifo
# wait for the command to be at T-1, forking nothing ourselves
for i in $(seq 1200); do [[ -s $PF.ready ]] && break; read -t 0.1 -u 9 x; done
"$BIN" sweep --cgroup $P >$PF.sweep 2>&1 & SW=$!
wait $SW; RC=$?
INO=$(stat -c %i $LEAF 2>/dev/null)
echo "sweeper pid $SW; ready: $(cat $PF.ready 2>/dev/null)"
echo "sweep rc=$RC: $(cat $PF.sweep)"
[ -n "$INO" ] && echo "/proc/locks: $(grep -c ":$INO " /proc/locks) flock lines on the leaf; the one naming the sweeper's pid: $(grep ":$INO " /proc/locks | awk -v p=$SW '$5==p' | head -1)"
for k in $(seq ${SWEEPS:-0}); do   # later sweeps, at whatever pid they get
  timeout 20 "$BIN" sweep --cgroup $P 2>&1 | head -1 | cut -c1-60
done
sleep 1
H=$(cat $PF.holder 2>/dev/null)
if [ -n "$H" ] && [ -d /proc/$H ] && [ "$(sed 's/.*) //' /proc/$H/stat | cut -c1)" != Z ]; then
  echo "BROKEN: pid $H (uid $(stat -c %u /proc/$H)) ALIVE after the sweep, in $(grep ^0:: /proc/$H/cgroup); the leaf $( [ -d $LEAF ] && echo 'is still there' || echo 'is gone')"
else
  [ "$SW" = "$T" ] && echo "held: nothing runs" || echo "missed (the sweeper got $SW, not $T: another fork came first); nothing runs"
fi
# clean up: the pids our own run recorded, then the leaf and the parent
exec 9<&-
for p in $(cat $LEAF/cgroup.procs 2>/dev/null); do kill -9 $p; done
[ -n "$H" ] && [ -d /proc/$H ] && kill -9 $H
for i in $(seq 50); do [ -z "$(cat $LEAF/cgroup.procs 2>/dev/null)" ] && break; sleep 0.1; done; sleep 0.5  # 19000 fds take a moment to close
for s in $P/*/; do [ -d "$s" ] && rmdir "$s"; done
rmdir $P; rm -f $PF.*
