#!/bin/bash
# Review 4: the third review's finding 3 (escape the limited leaf, return
# before the cleanup) is now caught when the processes are written back into
# the leaf's OWN cgroup.procs/tasks, and by pids.peak. Variant: the command
# makes a child cgroup below its leaf (the leaf is its uid's), and returns
# into the CHILD's cgroup.procs: not watched, and inside the leaf for the
# audit. KIND=pids (41 processes under --max-procs 20: pids.peak still sees
# it) or KIND=memory (200 MiB held under --max-memory 32M: the v1 memory
# charge stays with the parent; nothing sees it).
# Usage (root): limit-return-into-child.sh [nobody|root]   KIND=pids|memory
set -u
WHO=${1:-root}; KIND=${KIND:-memory}
# RETURN=own (the control) writes the leaf's own cgroup.procs instead: reported
[ "${RETURN:-child}" = own ] && T= || T=sub/
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
if [ "$KIND" = pids ]; then
LIM="--max-procs 20"
CMD='
P=$(grep pids: /proc/self/cgroup|cut -d: -f3); L=/sys/fs/cgroup/pids$P
echo leaf=$P pids.max=$(cat $L/pids.max); mkdir $L/sub || exit 9
echo $$ > /sys/fs/cgroup/pids$(dirname $P)/cgroup.procs
for i in $(seq 1 40); do sleep 30 & done
kids=($(jobs -p)); echo alive=$(( ${#kids[@]} + 1 )) while out of the leaf
for p in "${kids[@]}" $$; do echo $p > $L/${T}cgroup.procs; done
read cur < $L/pids.current; echo "back below the leaf: pids.current=$cur"
for p in "${kids[@]}"; do kill $p; done'
else
LIM="--max-memory 32M"
CMD='
P=$(grep memory: /proc/self/cgroup|cut -d: -f3); L=/sys/fs/cgroup/memory$P
echo leaf=$P limit=$(cat $L/memory.limit_in_bytes); mkdir $L/sub || exit 9
echo $$ > /sys/fs/cgroup/memory$(dirname $P)/cgroup.procs
python3 -c "
import os,time
b=bytearray(200<<20)
for i in range(0,len(b),4096): b[i]=1
open(\"/tmp/eh-review4-mem.go\",\"w\").close()
time.sleep(3)
print(\"python held 200 MiB, rss kB:\", [l for l in open(\"/proc/self/status\") if l.startswith(\"VmRSS\")][0].split()[1], flush=True)
" & py=$!
while [ ! -e /tmp/eh-review4-mem.go ]; do read -t 0.1 < /dev/zero 2>/dev/null || sleep 0.1; done
echo $py > $L/${T}cgroup.procs; echo $$ > $L/${T}cgroup.procs
echo "back below the leaf: leaf usage=$(cat $L/memory.usage_in_bytes) max_usage=$(cat $L/memory.max_usage_in_bytes)"
wait $py; rm -f /tmp/eh-review4-mem.go'
fi
CMD="T=$T; $CMD"
if [ "$WHO" = root ]; then
  HOME=/nonexistent timeout 40 "$BIN" --no-login ${EXTRA:-} $LIM -- "$CMD"; echo "rc=$?"
else
  D=/sys/fs/cgroup/$KIND/review4-deleg
  mkdir -p $D && chown nobody:nogroup $D $D/cgroup.procs $D/tasks
  timeout 40 bash -c 'echo $$ > '$D'/cgroup.procs; cd /tmp; HOME=/nonexistent exec setpriv --reuid nobody --regid nogroup --clear-groups "$0" --no-login $2 '"$LIM"' -- "$1"' "$BIN" "$CMD" "${EXTRA:-}"; echo "rc=$?"
  for s in $D/*/; do [ -d "$s" ] && rmdir "$s"/sub "$s" 2>/dev/null; done; rmdir $D
fi
rm -f /tmp/eh-review4-mem.go
