#!/bin/bash
# Review 4: the limit guard (cgroup/tamper_linux.go) needs an inotify
# instance; without one it silently falls back to the read-back at the
# cleanup (and watchWrites watches nothing). Instances are counted per uid
# (fs.inotify.max_user_instances, 128 here), so another process of the
# harness's uid (a concurrent job of the same harness, say) that holds them
# all while a run starts leaves that run's command free to raise its limit,
# use it and put the value back (memory.limit_in_bytes: pids.peak would
# still show a raised pids.max), or to leave its memory leaf and come back
# into its own cgroup.procs: nothing is reported. The uid is a spare one
# (UID=4242, not nobody, so that the CI suite's nobody runs keep their
# inotify instances), with a delegated v1 memory cgroup.
# Usage (root): inotify-exhausted-tamper-unseen.sh   (HOLD=0: the control)
set -u
U=${UID4:-4242}; HOLD=${HOLD:-1}
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
CMD='M=/sys/fs/cgroup/memory$(grep memory: /proc/self/cgroup|cut -d: -f3)
echo 1G > $M/memory.memsw.limit_in_bytes; echo 1G > $M/memory.limit_in_bytes
/usr/bin/python3 -c "
b=bytearray(100<<20)
for i in range(0,len(b),4096): b[i]=1
print(\"100 MiB touched in the leaf, its limit raised\")"
echo 32M > $M/memory.limit_in_bytes; echo 32M > $M/memory.memsw.limit_in_bytes; echo "limit put back: $(cat $M/memory.limit_in_bytes)"
echo $$ > $(dirname $M)/cgroup.procs
/usr/bin/python3 -c "
b=bytearray(100<<20)
for i in range(0,len(b),4096): b[i]=1
print(\"100 MiB touched outside the leaf\")"
echo $$ > $M/cgroup.procs; echo "back in the memory leaf"'
D="/sys/fs/cgroup/memory/review4-ino"
mkdir -p $D; for d in $D; do chown $U:$U $d $d/cgroup.procs $d/tasks; done
timeout 40 bash -c '
for d in '"$D"'; do echo $$ > $d/cgroup.procs; done
cd /tmp
if [ '$HOLD' = 1 ]; then
  setpriv --reuid '$U' --regid '$U' --clear-groups /usr/bin/python3 -c "
import ctypes,time,sys
libc=ctypes.CDLL(None); fds=[]
while True:
    fd=libc.inotify_init1(0)
    if fd<0: break
    fds.append(fd)
print(\"holder: %d inotify instances held, the uid has none left\"%len(fds),flush=True)
time.sleep(15)" & holder=$!
  sleep 1
fi
HOME=/nonexistent setpriv --reuid '$U' --regid '$U' --clear-groups "$0" --no-login --max-memory 32M -- "$1"
echo rc=$?
[ -n "${holder:-}" ] && kill $holder; wait' "$BIN" "$CMD"
sleep 0.3; for d in $D; do rmdir $d; done
