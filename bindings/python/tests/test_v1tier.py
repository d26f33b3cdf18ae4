"""cgroup-v1 tier (limits only): a SIGKILLed shellsup's tree is swept by the binding.

Review 2026-12-02, finding 6: a harness with a delegated v1 pids cgroup and
no writable v2 directory gets the ``cgroup-v1`` tier, whose start frame names
no v2 leaf. The binding neither killed the v1 leaf nor swept when the command
SIGKILLed shellsup, so its ``setsid`` sleeper outlived the call. The binding
now runs ``shellsup sweep``, which kills the v1 leaf through pidfds of
verified members. The harness runs as nobody, in a v1 pids cgroup delegated
to it, in a child Python.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

PIDS = "/sys/fs/cgroup/pids"

HARNESS = r"""
import json, shellsup as shell
try:
    shell.run('setsid sleep 61.74 </dev/null >/dev/null 2>&1 & echo $! > "$LOG"; kill -9 $PPID',
              timeout=20, progress=None, max_procs=20, pidns=False)
    print(json.dumps({"category": None, "message": "a result"}))
except shell.ShellsupError as e:
    print(json.dumps({"category": e.category, "message": str(e)}))
"""


def _is_sleeper(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"61.74" in f.read()
    except OSError:
        return False


def _remove(deleg: str) -> None:
    """Remove the delegated cgroup and any leaf left in it."""
    for leaf in [os.path.join(deleg, d) for d in os.listdir(deleg) if d.startswith("shellsup-")] + [deleg]:
        deadline = time.monotonic() + 2
        while True:
            try:
                os.rmdir(leaf)
                break
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)  # no event for "v1 cgroup empty"


def test_a_killed_shellsup_in_the_v1_tier_is_swept(leaks, child_env):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to delegate a v1 pids cgroup to nobody")
    if not os.path.exists(os.path.join(PIDS, "tasks")):
        pytest.skip(f"needs a cgroup v1 pids hierarchy at {PIDS}")
    deleg = os.path.join(PIDS, f"shellsup-pytest-v1tier-{os.getpid()}")
    os.mkdir(deleg)
    top = Path(tempfile.mkdtemp(prefix="shellsup-v1tier-"))
    sleeper = 0
    try:
        for f in (deleg, deleg + "/cgroup.procs", deleg + "/tasks"):
            os.chown(f, 65534, 65534)
        os.chmod(top, 0o777)
        log = top / "log"
        log.write_text("")
        os.chmod(log, 0o666)
        env = dict(child_env, HOME=str(top), LOG=str(log))
        done = subprocess.run(
            ["/bin/sh", "-c", 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"', "sh", deleg,
             "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", HARNESS],
            env=env, cwd=str(top), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.strip().splitlines()[-1])
        sleeper = int(log.read_text().strip())
        assert out["category"] == "protocol", out
        # the sweep may also meet other users' stale leaves in the v2 cgroup (and fail on them)
        assert re.search(r"(the cgroup-v1 tier's leaves are not named in the start frame|no start frame arrived.*?); "
                         r"the binding ran shellsup sweep.*"
                         r"killed [1-9][0-9]* processes in " + re.escape(deleg) + r"/shellsup-\S+ and removed it",
                         out["message"]), out
        assert not _is_sleeper(sleeper), f"the setsid sleeper {sleeper} outlived the call: {out}"
        assert leaks.survivors() == []
    finally:
        if sleeper and _is_sleeper(sleeper):
            os.kill(sleeper, signal.SIGKILL)  # checked just now to be the test's own sleeper
        _remove(deleg)
        shutil.rmtree(top, ignore_errors=True)
