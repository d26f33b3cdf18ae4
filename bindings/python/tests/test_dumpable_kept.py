"""After an unreported run the harness stays non-dumpable for the rest of its life.

Review 2026-12-02, finding 4: the command (as the harness's user, nobody,
subreaper tier) leaves a ``setsid`` survivor and SIGKILLs shellsup. The run is
a ``protocol`` error, as documented, and the survivor runs on; but the binding
then gave the harness its dumpable setting back, and the survivor read
``/proc/<harness>/environ`` (and could ptrace it and forge later runs). Now,
once a run was unreported, the harness is never made dumpable again, through
later runs too. The harness runs as nobody in a child Python.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

# The survivor waits for the harness to say its calls returned, then tries
# /proc/<harness>/environ once and writes what happened to $DIR/verdict.
COMMAND = r"""H=$(awk '{print $4}' /proc/$PPID/stat)
setsid bash -c 'i=0; until [ -e "$DIR/returned" ]; do i=$((i+1)); [ $i -lt 1500 ] || exit; sleep 0.01; done
if tr "\0" "\n" < /proc/'$H'/environ > /dev/null 2>&1; then echo stolen; else echo refused; fi > "$DIR/verdict.tmp"
mv "$DIR/verdict.tmp" "$DIR/verdict"' </dev/null >/dev/null 2>&1 &
kill -9 $PPID"""

HARNESS = r"""
import ctypes, json, os, sys, time
import shellsup as shell
d = os.environ["DIR"]
try:
    shell.run(sys.argv[1], timeout=20, progress=None, pidns=False)
    category = None
except shell.ShellsupError as e:
    category = e.category
shell.run("true", progress=None)  # a later run, reported: still no dumpable again
dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
open(os.path.join(d, "returned"), "w").close()
verdict = os.path.join(d, "verdict")
deadline = time.monotonic() + 20
while not os.path.exists(verdict) and time.monotonic() < deadline:
    time.sleep(0.01)
print(json.dumps({"category": category, "dumpable": dumpable,
                  "verdict": open(verdict).read().strip() if os.path.exists(verdict) else None}))
"""


def test_the_survivor_of_an_unreported_run_cannot_read_the_harness(leaks, child_env):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to act as nobody")
    top = Path(tempfile.mkdtemp(prefix="shellsup-dumpable-"))
    try:
        os.chmod(top, 0o777)
        env = dict(child_env, HOME=str(top), DIR=str(top))
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               sys.executable, "-c", HARNESS, COMMAND],
                              env=env, cwd=str(top), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.strip().splitlines()[-1])
        assert out["category"] == "protocol", out
        assert out["dumpable"] == 0, f"the harness was made dumpable again: {out}"
        assert out["verdict"] == "refused", f"the survivor read /proc/<harness>/environ: {out}"
        deadline = time.monotonic() + 5
        while leaks.survivors() and time.monotonic() < deadline:
            time.sleep(0.01)  # the survivor exits once it has written its verdict
    finally:
        shutil.rmtree(top, ignore_errors=True)
