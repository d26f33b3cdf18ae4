#!/bin/bash
# Review 2026-12-02, finding 6: in the cgroup-v1 (limits only) tier the binding
# neither kills the v1 leaf nor runs `shellsup sweep` after a SIGKILLed
# shellsup; the command's setsid sleeper survives (a `shellsup sweep` would
# have killed it: the script runs one at the end, and shows it does).
# Usage (as root, from the worktree): timeout 90 testdata/review/v1-tier-survivor.sh
set -u
BIN=${SHELLSUP_BIN:-$PWD/bin/shellsup}
SRC=$PWD/bindings/python/src
D=/sys/fs/cgroup/pids/review-v1tier
mkdir -p $D && chown nobody:nogroup $D $D/cgroup.procs $D/tasks
NB="setpriv --reuid nobody --regid nogroup --clear-groups"
timeout 40 bash -c "echo \$\$ > $D/cgroup.procs; cd /tmp; SHELLSUP_BIN=$BIN PYTHONPATH=$SRC exec $NB /usr/bin/python3 -c '
import shellsup as shell
try:
    shell.run(\"setsid sleep 81.81 & sleep 0.3; kill -9 \$PPID\", timeout=10, progress=None, max_procs=20,
              env={\"PATH\": \"/usr/bin:/bin\", \"HOME\": \"/nonexistent\"})
except Exception as e:
    print(\"run raised:\", e)
'"
sleep 0.5
echo "survivors after the call:"; ps -eo pid,user,args | grep "sleep 81.81" | grep -v grep
timeout 20 bash -c "echo \$\$ > $D/cgroup.procs; HOME=/nonexistent exec $NB $BIN sweep"
rmdir $D
