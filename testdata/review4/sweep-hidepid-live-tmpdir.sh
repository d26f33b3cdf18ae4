#!/bin/bash
# Review 4: a sweep judges a tag (a TMPDIR's or a leaf's) by /proc/PID of
# the shellsup that made it: ENOENT means "gone". On a /proc mounted
# hidepid=2 (invisible; a common hardening), a non-root sweep does not see
# root's processes, so a LIVE root shellsup running `--user nobody
# --sandbox` looks gone: nobody's `shellsup sweep` (or a nobody sandbox
# run's start-up sweep) removes that live run's TMPDIR, and kills the live
# run's command (nobody's processes, in a leaf it judged stale).
# Isolation: everything runs in private cgroups this script makes (so the
# sweep sees only this script's leaves), and the hidepid /proc is mounted
# in a private mount namespace (the host's /proc is not touched).
# Usage (root): sweep-hidepid-live-tmpdir.sh   (HIDEPID=0: the control, holds)
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
CG="/sys/fs/cgroup/unified/review4-hp /sys/fs/cgroup/pids/review4-hp /sys/fs/cgroup/memory/review4-hp"
mkdir -p $CG
OUT=$(mktemp /tmp/eh-review4-hidepid.XXXXXX); chmod 644 "$OUT"
HIDEPID=${HIDEPID:-2} timeout 40 bash -c '
for c in '"$CG"'; do echo $$ > $c/cgroup.procs; done
HOME=/nonexistent timeout 30 "$0" --no-login --user nobody --cwd /tmp --sandbox read-only -- \
  "echo data > \$TMPDIR/work; echo TMPDIR=\$TMPDIR; sleep 6; cat \$TMPDIR/work 2>&1" > "$1" 2>&1 &
run=$!
sleep 2
echo "--- nobody runs shellsup sweep, its /proc mounted hidepid=$HIDEPID:"
timeout 20 unshare -m --propagation private bash -c "mount -t proc -o hidepid=${HIDEPID:-2} proc /proc &&
  cd /tmp && HOME=/nonexistent setpriv --reuid nobody --regid nogroup --clear-groups \"\$0\" sweep" "$0" 2>&1
wait $run
echo "--- the live run (root shellsup, --user nobody):"; cat "$1"' "$BIN" "$OUT"
rm -f "$OUT"
sleep 0.5; for c in $CG; do rmdir $c 2>/dev/null; done
