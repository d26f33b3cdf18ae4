#!/bin/bash
# Review 5: v1 cgroups can be renamed within their parent, and a delegated
# (or root) command may rename its own limited leaf. shellsup's audit at
# the cleanup reads the leaf's process list BY PATH (cgroup/audit_linux.go
# procsIn), so after the rename it cannot read it, and Missing gives up
# ("nothing can be told"): a process moved wholly out of the leaf, alive at
# the cleanup, holding 200 MiB under --max-memory 32M, is not reported.
# The renamed leaf is also left behind, unreported (its removal is by path).
# Usage (root): limit-rename-leaf.sh [nobody|root]   EXTRA=--pidns (root) / --pidns-auto (nobody)
#   VIA=binding: through the Python binding (PIDNS=auto|on|off)
#   KIND=pids: the same under --max-procs 20 (41 processes alive outside the leaf)
#   RENAME=0 is the control: the same move out without the rename (reported)
set -u
WHO=${1:-root}; RENAME=${RENAME:-1}
. "$(dirname "$0")/lib.sh"
KIND=${KIND:-memory}
[ "$KIND" = pids ] && LIM="--max-procs 20"
if [ "$KIND" = pids ]; then CMD='
P=$(grep :pids: /proc/self/cgroup|cut -d: -f3); L=/sys/fs/cgroup/pids$P; U=$(dirname $L)
echo leaf=$P pids.max=$(cat $L/pids.max)
if [ '$RENAME' = 1 ]; then mv $L $U/review5-renamed && echo "renamed the leaf to $U/review5-renamed"; fi
echo $$ > $U/cgroup.procs
for i in $(seq 1 40); do sleep 30 & done
echo "bash exits; alive outside the leaf: $(( $(jobs -p | wc -l) + 1 )) processes"; sleep 1'
else CMD='
P=$(grep :memory: /proc/self/cgroup|cut -d: -f3); L=/sys/fs/cgroup/memory$P; U=$(dirname $L)
echo leaf=$P limit=$(cat $L/memory.limit_in_bytes)
if [ '$RENAME' = 1 ]; then mv $L $U/review5-renamed && echo "renamed the leaf to $U/review5-renamed"; fi
echo $$ > $U/cgroup.procs
python3 -c "
import time
b=bytearray(200<<20)
for i in range(0,len(b),4096): b[i]=1
time.sleep(30)" &
sleep 3
echo "bash exits; python $! alive in $(grep :memory: /proc/$!/cgroup|cut -d: -f3), $(grep VmRSS /proc/$!/status)"'
fi
run_limited "$WHO" "$CMD"
