#!/bin/bash
# Review 5: --max-memory escaped on a v1 memory leaf with no write to the
# leaf at all, and no cgroup made below it. A Python command starts a
# second thread (it stays in the leaf), then moves only its LEADER thread
# into the parent's v1 `tasks` (a write outside the leaf, which nothing
# watches). v1 memcg charges every page of the mm to mm->owner, the
# leader, now in the parent: 200 MiB are used under a 32 MiB limit. The
# process's TGID stays in the leaf's cgroup.procs (v1 lists a TGID there
# while any of its threads is in it), so the cleanup's audit does not find
# it outside the leaf, and nothing is reported. The Python is alive (and
# holding the memory) when bash exits and the cleanup runs.
# Usage (root): limit-leader-thread-out.sh [nobody|root]
#   EXTRA="--pidns" (root) or EXTRA="--pidns-auto" (nobody) for the namespace
#   VIA=binding: through the Python binding (PIDNS=auto|on|off)
#   MODE=procs is the control: the whole process moved out (reported, left the leaf)
set -u
WHO=${1:-root}; MODE=${MODE:-leader}
. "$(dirname "$0")/lib.sh"
CMD='
MODE='$MODE' python3 -c "
import os, threading, time
P=[l for l in open(\"/proc/self/cgroup\") if \":memory:\" in l][0].strip().split(\":\",2)[2]
L=\"/sys/fs/cgroup/memory\"+P; parent=os.path.dirname(L)
print(\"leaf\", P, \"limit\", open(L+\"/memory.limit_in_bytes\").read().strip(), flush=True)
t=threading.Thread(target=time.sleep, args=(30,), daemon=True); t.start()
f=\"tasks\" if os.environ[\"MODE\"]==\"leader\" else \"cgroup.procs\"
open(parent+\"/\"+f,\"w\").write(str(os.getpid()))
b=bytearray(200<<20)
for i in range(0,len(b),4096): b[i]=1
rss=[l for l in open(\"/proc/self/status\") if l.startswith(\"VmRSS\")][0].split()[1]
print(\"rss kB\", rss, \"leaf usage\", open(L+\"/memory.usage_in_bytes\").read().strip(),
      \"max_usage\", open(L+\"/memory.max_usage_in_bytes\").read().strip(),
      \"tgid in leaf cgroup.procs:\", str(os.getpid()) in open(L+\"/cgroup.procs\").read().split(), flush=True)
time.sleep(30)
" &
sleep 4; echo "bash exits; the python (pid $!) is alive, holding its memory: $(grep VmRSS /proc/$!/status)"'
run_limited "$WHO" "$CMD"
