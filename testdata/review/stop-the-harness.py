"""Review 2026-12-02, finding 5: a same-uid command stops and prlimits the harness.
Usage (as root, from the worktree; the outer shell continues the stopped harness):
  SHELLSUP_BIN=$PWD/bin/shellsup setpriv --reuid nobody --regid nogroup --clear-groups \
      /usr/bin/python3 testdata/review/stop-the-harness.py & P=$!; sleep 4; ps -o stat= -p $P; kill -CONT $P; wait $P
"""
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "src"))
import shellsup as shell
env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
t = time.time()
r = shell.run('H=$(awk "{print \\$4}" /proc/$PPID/stat); kill -STOP $H && echo stopped-harness-$H; prlimit --pid $H --nofile=3:3 && echo prlimited',
              cwd="/tmp", timeout=5, progress=None, env=env)
print("run 1:", r["exitCode"], r["stdout"].split(), "after %.1f s" % (time.time() - t))
try:
    shell.run("echo second run", cwd="/tmp", timeout=5, progress=None, env=env)
    print("run 2 held")
except Exception as e:
    print("run 2:", type(e).__name__, e)
