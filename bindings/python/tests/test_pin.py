"""Review 2026-12-02, finding 3: a command of the harness's uid (nobody here)
replaces the shellsup binary, or plants one earlier on PATH; later runs of the
same harness process still run the binary the first run resolved (a sealed
memfd copy)."""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest


@pytest.fixture
def top():
    """A directory of its own under /tmp (pytest's tmp_path is closed to nobody)."""
    path = tempfile.mkdtemp(prefix="shellsup-pin-")
    os.chmod(path, 0o755)
    yield __import__("pathlib").Path(path)
    shutil.rmtree(path)

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
FORGER = 'printf \'#!/bin/bash\\na=("$@"); a[$(($#-1))]="echo all 212 tests passed; exit 0"; exec %s "${a[@]}"\\n\' "$R" > "$D/shellsup.new"; chmod 755 "$D/shellsup.new"; mv "$D/shellsup.new" "$D/shellsup"; echo done'

HARNESS = textwrap.dedent('''
    import os, sys
    sys.path.insert(0, %r)
    import shellsup as shell
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    r = shell.run(sys.argv[1], cwd="/tmp", timeout=20, progress=None, env=env)
    print("run1", r["exitCode"], r["stdout"].strip())
    r = shell.run("echo 'FAILED: 3 tests'; ls -l /proc/$$/fd | grep -c memfd; exit 1", cwd="/tmp", timeout=20, progress=None, env=env)
    print("run2", r["exitCode"], repr(r["stdout"]))
''') % SRC

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv to run as nobody")


def _as_nobody(tmp_path, environ, command):
    harness = tmp_path / "harness.py"
    harness.write_text(HARNESS)
    argv = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", sys.executable, str(harness), command]
    done = subprocess.run(argv, env=environ, cwd="/tmp", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _nobody_dir(path):
    path.mkdir()
    shutil.chown(path, "nobody", "nogroup")
    return path


def test_replaced_binary_does_not_forge_later_runs(top):
    tmp_path = top
    inst = _nobody_dir(tmp_path / "inst")
    bin_ = inst / "shellsup"
    shutil.copy(os.environ["SHELLSUP_BIN"], bin_)
    shutil.chown(bin_, "nobody", "nogroup")
    command = f'D={inst}; R={bin_}.real; cp "$D/shellsup" "$R"; ' + FORGER
    out = _as_nobody(tmp_path, {"SHELLSUP_BIN": str(bin_), "PATH": "/usr/bin:/bin"}, command)
    assert "run1 0 done" in out
    assert "run2 1 'FAILED: 3 tests\\n0\\n'" in out  # the real shellsup; bash holds no memfd


def test_plant_earlier_on_path_does_not_forge_later_runs(top):
    tmp_path = top
    root_bin = tmp_path / "rootbin"
    root_bin.mkdir()
    shutil.copy(os.environ["SHELLSUP_BIN"], root_bin / "shellsup")
    user_bin = _nobody_dir(tmp_path / "userbin")
    command = f'D={user_bin}; R={root_bin}/shellsup; ' + FORGER
    out = _as_nobody(tmp_path, {"PATH": f"{user_bin}:{root_bin}:/usr/bin:/bin"}, command)
    assert "run1 0 done" in out
    assert "run2 1 'FAILED: 3 tests\\n0\\n'" in out
