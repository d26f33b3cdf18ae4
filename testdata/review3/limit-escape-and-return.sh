#!/bin/bash
# Review 3: the first review's finding 1 (a same-uid command leaves its
# v1 pids leaf for the parent it owns) is now reported, because the cleanup
# finds members outside the leaf. Variant: the processes move BACK into the
# leaf before the cleanup (migration is not bounded by pids.max), so the
# cleanup finds every member in its leaf: 41 processes lived under
# --max-procs 20. Usage (root): limit-escape-and-return.sh [nobody|root]
set -u
WHO=${1:-nobody}
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
CMD='P=$(grep pids: /proc/self/cgroup|cut -d: -f3); L=/sys/fs/cgroup/pids$P
echo leaf=$P pids.max=$(cat $L/pids.max)
echo $$ > /sys/fs/cgroup/pids$(dirname $P)/cgroup.procs
for i in $(seq 1 40); do sleep 30 & done
kids=($(jobs -p)); echo alive=$(( ${#kids[@]} + 1 )) while out of the leaf
for p in "${kids[@]}" $$; do echo $p > $L/cgroup.procs; done
read cur < $L/pids.current; echo "back in the leaf (builtins only from here): pids.current=$cur"
for p in "${kids[@]}"; do kill $p; done'
if [ "$WHO" = root ]; then
  HOME=/nonexistent timeout 30 "$BIN" --no-login ${EXTRA:-} --max-procs 20 -- "$CMD"; echo "rc=$?"
else
  D=/sys/fs/cgroup/pids/review3-deleg
  mkdir -p $D && chown nobody:nogroup $D $D/cgroup.procs $D/tasks
  timeout 30 bash -c 'echo $$ > '$D'/cgroup.procs; cd /tmp; HOME=/nonexistent exec setpriv --reuid nobody --regid nogroup --clear-groups "$0" --no-login $2 --max-procs 20 -- "$1"' "$BIN" "$CMD" "${EXTRA:-}"; echo "rc=$?"
  rmdir $D
fi
