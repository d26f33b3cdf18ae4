#!/bin/bash
# Review 2026-12-02, finding 2: a sweep (or the start-up sweep of any run)
# made from another *time* namespace reads every owner's start time shifted
# by the namespace's boottime offset, judges live leaves stale and kills them.
# Usage (as root, from the worktree): timeout 90 testdata/review/timens-sweep-kills-live-run.sh [root|nobody]
# Uses a private parent cgroup (never the host's shared one).
set -u
BIN=${SHELLSUP_BIN:-$PWD/bin/shellsup}
WHO=${1:-root}
P=/sys/fs/cgroup/unified/review-timens
mkdir -p $P/a $P/b
if [ "$WHO" = nobody ]; then
  chown -R nobody:nogroup $P
  AS="setpriv --reuid nobody --regid nogroup --clear-groups"; UNS="unshare -U -r -T --boottime 100000"
else
  AS=""; UNS="unshare -T --boottime 100000"
fi
# run A: a live run in $P (its shellsup started in $P/a, so it may clone into $P)
timeout 40 bash -c "echo \$\$ > $P/a/cgroup.procs; cd /tmp; HOME=/nonexistent exec $AS $BIN --cgroup $P -- 'sleep 6; echo A finished'" > /tmp/review-timens-A.out 2>&1 &
A=$!
sleep 1.5
# run B: an ordinary run, started in a time namespace with another boottime offset
timeout 20 bash -c "echo \$\$ > $P/b/cgroup.procs; cd /tmp; HOME=/nonexistent exec $AS $UNS $BIN --cgroup $P -- 'echo B ran'"
echo "B rc=$?"
wait $A; echo "A rc=$? (0 expected; 137 = killed by B's sweep)"
cat /tmp/review-timens-A.out; rm -f /tmp/review-timens-A.out
rmdir $P/a $P/b $P/shellsup-* 2>/dev/null; rmdir $P
