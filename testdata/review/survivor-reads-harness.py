"""Review 2026-12-02, finding 4: the survivor of a SIGKILLed shellsup (subreaper
tier, documented) finds the harness dumpable again once the run has ended.
Usage (as root, from the worktree):
  SHELLSUP_BIN=$PWD/bin/shellsup timeout 60 setpriv --reuid nobody --regid nogroup \
      --clear-groups /usr/bin/python3 testdata/review/survivor-reads-harness.py
"""
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "src"))
import shellsup as shell
out = "/tmp/review-stolen-%d" % os.getpid()
cmd = r'''H=$(awk '{print $4}' /proc/$PPID/stat)
setsid bash -c 'for i in $(seq 1 100); do if tr "\0" "\n" < /proc/'$H'/environ > %s 2>/dev/null; then echo "stolen after ${i}x50ms" >> %s; exit; fi; sleep 0.05; done' </dev/null >/dev/null 2>&1 &
sleep 0.2; kill -9 $PPID''' % (out, out)
try:
    shell.run(cmd, cwd="/tmp", timeout=20, progress=None, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
except Exception as e:
    print("run raised (documented):", type(e).__name__, str(e)[:120])
time.sleep(6)  # the loop gives up after 5 s: nothing is left running
try:
    with open(out) as f:
        lines = f.read().splitlines()
    print("the survivor read the harness's environ:", len(lines) - 1, "variables;", lines[-1])
    os.unlink(out)
except FileNotFoundError:
    print("held: the survivor could not read the harness")
