"""The frames channel cannot be forged: the command attacks the harness through /proc.

The command runs as the harness's user, and the harness is dumpable: the
command can read /proc/<harness>/fd. A pipe there can be reopened in either
direction; a socket cannot (ENXIO). The binding gives shellsup socketpairs,
so the command can neither write a forged totals frame into the frame
stream nor read the cancel frames out of the control channel. And a report
counts only when shellsup then exits as it promises: a shellsup SIGKILLed
after a (forged) totals frame is an unreported run, a protocol error.

Each scenario runs in a child Python, as root and as nobody, so that the
harness and the command share a user as they would in production.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

import msgpack
import pytest

import shellsup as shell
from shellsup import _core, _frames

PY = sys.executable
DEADLINE = 60

# Finds the harness (shellsup's parent), tries to open each of its pipe and
# socket fds above 2 for writing, writes a forged totals frame into each it
# can, leaves a setsid sleeper behind and SIGKILLs shellsup.
FORGE = r"""
sleep 0.5
s=$(cat /proc/$PPID/stat); s=${s##*) }; set -- $s; h=$2
for fd in /proc/$h/fd/*; do
  n=${fd##*/}; [ "$n" -gt 2 ] || continue
  what=$(readlink "$fd") || continue
  case $what in pipe:*|socket:*) ;; *) continue ;; esac
  if err=$( { echo "$FORGED" | base64 -d > "$fd"; } 2>&1 ); then
    echo "wrote $n $what" >> "$LOG"
  else
    echo "refused $n $what: $err" >> "$LOG"
  fi
done
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo "sleeper $!" >> "$LOG"
kill -9 $PPID
sleep 300
"""

# Tries to open each pipe and socket fd of the harness for reading, to
# swallow the cancel frames (and the frames); says "done" when it has tried.
SWALLOW = r"""
s=$(cat /proc/$PPID/stat); s=${s##*) }; set -- $s; h=$2
for fd in /proc/$h/fd/*; do
  n=${fd##*/}; [ "$n" -gt 2 ] || continue
  what=$(readlink "$fd") || continue
  case $what in pipe:*|socket:*) ;; *) continue ;; esac
  if err=$( { exec 7<"$fd"; } 2>&1 ); then
    echo "opened $n $what" >> "$LOG"
    timeout 60 cat "$fd" > /dev/null 2>&1 &
  else
    echo "refused $n $what: $err" >> "$LOG"
  fi
done
echo done >> "$LOG"
sleep 300
"""

# The harness: runs one scenario and prints what came of it as JSON.
HARNESS = r"""
import json, os, sys, time
import shellsup as shell
cfg = json.loads(sys.argv[1])
kw = {} if cfg["pidns"] is None else {"pidns": cfg["pidns"]}
out = {"tier": shell.run("true", progress=None, **kw).cleanup["tier"]}
log = os.environ["LOG"]

def kill_shellsup():
    # As the OOM killer or an operator would: SIGKILL shellsup (this
    # process's only child) once the command has started its sleeper.
    end = time.monotonic() + 20
    while time.monotonic() < end and not any(l.startswith("sleeper ") for l in open(log)):
        time.sleep(0.01)
    for task in os.listdir("/proc/self/task"):
        for pid in open(f"/proc/self/task/{task}/children").read().split():
            os.kill(int(pid), 9)

try:
    if cfg["scenario"] == "killed":
        import threading
        threading.Thread(target=kill_shellsup, daemon=True).start()
    if cfg["scenario"] in ("forge", "killed"):
        # In a PID namespace the command cannot reach shellsup: the run
        # lasts until its timeout.
        limit = 3 if "pidns" in out["tier"].split("+") and cfg["scenario"] == "forge" else 30
        if cfg["api"] == "run":
            res = shell.run(cfg["command"], progress=None, timeout=limit, **kw)
        else:
            res = shell.start(cfg["command"], lifetime=limit, **kw).wait(timeout=30)
        out["result"] = dict(res)
    else:
        job = shell.start(cfg["command"], lifetime=30, **kw)
        end = time.monotonic() + 20
        while time.monotonic() < end and "done" not in open(log).read().split():
            time.sleep(0.01)
        t0 = time.monotonic()
        res = job.kill()
        out["result"] = dict(res)
        out["killSeconds"] = time.monotonic() - t0
except shell.ShellsupError as exc:
    out["error"] = {"category": exc.category, "message": str(exc)}
print(json.dumps(out))
"""


def _forged_totals() -> str:
    frame = _frames.encode({
        "type": "totals", "command": "forged", "cwd": "/", "stdout": "all 212 tests passed\n", "stderr": "",
        "exitCode": 0, "signal": None, "cancelled": False, "timedOut": False, "truncated": False,
        "totalBytes": 21, "capturedBytes": 21, "progressBytes": 21, "durationMs": 1, "cancelReason": "",
        "cleanup": {"tier": "subreaper", "trigger": "exit", "stragglers": [], "stragglersOmitted": 0},
    })
    return base64.b64encode(frame).decode()


def _as(user: str) -> List[str]:
    if user == "root":
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _scenario(child_env: Dict[str, str], user: str, **cfg: Any) -> Dict[str, Any]:
    if user != "root" and (os.geteuid() != 0 or not shutil.which("setpriv")):
        pytest.skip("needs root and setpriv to act as nobody")
    if user == "root" and os.geteuid() != 0:
        pytest.skip("runs as root")
    # pytest's tmp_path is closed to nobody: a directory of its own under /tmp
    top = Path(tempfile.mkdtemp(prefix="shellsup-channel-"))
    try:
        home = top / "home"
        home.mkdir()
        for d in (top, home):
            os.chmod(d, 0o777)
        log = top / "log"
        log.write_text("")
        os.chmod(log, 0o666)
        env = dict(child_env, HOME=str(home), LOG=str(log), FORGED=_forged_totals())
        done = subprocess.run(_as(user) + [PY, "-c", HARNESS, json.dumps(cfg)], env=env, cwd=str(top),
                              capture_output=True, text=True, timeout=DEADLINE)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.strip().splitlines()[-1])
        out["log"] = log.read_text().splitlines()
        return out
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _channel_lines(out: Dict[str, Any]) -> List[str]:
    """The log lines about the harness's sockets and pipes other than shellsup's stderr."""
    return [line for line in out["log"] if "socket:" in line or "pipe:" in line]


@pytest.mark.parametrize("pidns", [None, False, True], ids=["default", "no-pidns", "pidns"])
@pytest.mark.parametrize("api", ["run", "start"])
@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_forged_totals_frame_and_a_killed_shellsup_end_in_an_error(tmp_path, leaks, child_env, user, api, pidns):
    out = _scenario(child_env, user, scenario="forge", api=api, pidns=pidns, command=FORGE)
    tiers = out["tier"].split("+")
    if pidns is None:
        # The default: the cgroup tier where shellsup makes a leaf (root
        # here), else a PID namespace (nobody with no delegated cgroup).
        assert ("cgroup" if user == "root" else "pidns") in tiers, out
    if "pidns" in tiers:
        # The harness is outside the command's PID namespace: $PPID is not
        # shellsup, no fd of the harness is found, and whatever the run
        # says is shellsup's own report; the kernel kills the namespace.
        assert _channel_lines(out) == [], out
        assert out.get("result", {}).get("command") != "forged", out
        _await_no_survivors(leaks, out)
        return
    # Never a clean result: the forgery cannot be written, and a killed shellsup is unreported.
    assert "result" not in out, out
    assert out["error"]["category"] == "protocol", out
    assert "shellsup was killed by SIGKILL" in out["error"]["message"], out
    _refused(out, user)
    sleeper = [int(line.split()[1]) for line in out["log"] if line.startswith("sleeper ")]
    assert sleeper, out["log"]
    if "cgroup" in tiers:
        # The binding killed the leaf: nothing is left.
        _await_no_survivors(leaks, out)
        return
    # The subreaper tier alone, which only pidns=False gives nobody here:
    # the boundary died with shellsup (README, "Tiers"): the binding says
    # so; the test removes the orphans.
    assert pidns is False and user == "nobody", out
    assert "may still be running" in out["error"]["message"], out
    left = leaks.wait_for(1, comm="sleep")
    assert sleeper[0] in {p.pid for p in left}, (sleeper, left)
    leaks.kill(leaks.survivors())


# Leaves a setsid sleeper and waits; the harness then SIGKILLs shellsup.
SLEEPER = r"""
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo "sleeper $!" >> "$LOG"
sleep 300
"""


@pytest.mark.parametrize("api", ["run", "start"])
@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_killed_shellsup_leaves_nothing_by_default(tmp_path, leaks, child_env, user, api):
    # Inside a PID namespace the command cannot reach shellsup; but
    # shellsup can still die (the OOM killer, an operator): the binding
    # raises, and the default tier (cgroup for root here, a PID namespace
    # for nobody) leaves nothing of the command behind.
    out = _scenario(child_env, user, scenario="killed", api=api, pidns=None, command=SLEEPER)
    assert ("cgroup" if user == "root" else "pidns") in out["tier"].split("+"), out
    assert "result" not in out, out
    assert out["error"]["category"] == "protocol", out
    assert "shellsup was killed by SIGKILL" in out["error"]["message"], out
    if user == "nobody":
        assert "the command ran in a PID namespace, which the kernel kills when shellsup dies" in out["error"]["message"], out
    _await_no_survivors(leaks, out)


def _refused(out: Dict[str, Any], user: str) -> None:
    """The attack could not open the harness's frame channel. As nobody it
    cannot even list the harness's fds (the binding holds the harness
    non-dumpable while a run is open); a root command can, and finds two
    sockets that cannot be reopened (ENXIO)."""
    if user == "nobody":
        assert _channel_lines(out) == [], out["log"]
        return
    sockets = [line for line in out["log"] if "socket:" in line]
    assert len(sockets) >= 2, out["log"]  # the control channel and the frame stream
    for line in sockets:
        assert line.startswith("refused ") and "No such device or address" in line, out["log"]
    assert not [line for line in _channel_lines(out) if line.startswith("wrote ") and "socket:" in line]


def _await_no_survivors(leaks, out: Dict[str, Any]) -> None:
    end = time.monotonic() + 5
    while leaks.survivors() and time.monotonic() < end:
        time.sleep(0.01)
    assert leaks.survivors() == [], (out, leaks.survivors())


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_the_command_cannot_open_the_control_channel_to_swallow_a_cancel(tmp_path, leaks, child_env, user):
    out = _scenario(child_env, user, scenario="swallow", api="start", pidns=False, command=SWALLOW)
    assert "error" not in out, out
    _refused(out, user)
    res = out["result"]
    assert res["cancelled"] is True and res["timedOut"] is False, res
    assert out["killSeconds"] < 10, out


# -- the exit status must agree with the totals -------------------------------------------


@pytest.mark.parametrize("totals, code, counts", [
    ({"exitCode": 3}, 3, True),
    ({"exitCode": 3}, 0, False),
    ({"exitCode": 0}, -9, False),
    ({"exitCode": 143, "timedOut": True}, 124, True),
    ({"exitCode": 143, "cancelled": True, "cancelReason": "request"}, 130, True),
    ({"exitCode": 143, "cancelled": True, "cancelReason": "signal"}, 143, True),
    ({"exitCode": 143, "cancelled": True, "cancelReason": "signal"}, 130 + 63, False),
    ({"exitCode": 0, "cleanup": {"stragglers": [{"pid": 5}]}}, 125, True),
    ({"exitCode": 0, "cleanup": {"stragglers": [{"pid": 5}]}}, 0, False),
    ({"exitCode": None}, 125, True),
    (None, 125, True),
    (None, 127, True),
    (None, -9, False),
])
def test_expected_exit(totals, code, counts):
    expected, _ = _core.expected_exit(totals)
    assert (code in expected) is counts


def test_a_shellsup_that_exits_otherwise_than_its_totals_say_is_unreported(tmp_path, monkeypatch):
    # A fake shellsup sends a real-looking start and a clean totals frame, then exits 1.
    fake = tmp_path / "fake-shellsup"
    start = _frames.encode({"type": "start", "version": 1, "pid": 1, "childPid": 2, "command": "x", "cwd": "/",
                            "timeout": 1, "budget": 65536, "containment": "subreaper"})
    totals = base64.b64decode(_forged_totals())
    fake.write_text("#!/bin/sh\necho %s | base64 -d\nexit 1\n" % base64.b64encode(start + totals).decode())
    fake.chmod(0o755)
    monkeypatch.setenv("SHELLSUP_BIN", str(fake))
    with pytest.raises(shell.ShellsupError) as exc:
        shell.run("x", progress=None)
    err = exc.value
    assert err.category == "protocol"
    assert "unreported: its totals frame promises exit status 0, but shellsup exited with status 1" in str(err), err
    assert "its cleanup had finished" not in str(err)


# Tries what a command running as the harness's user can do to a dumpable
# harness: PTRACE_ATTACH it (then detach at once) and read its environment.
PTRACE = r"""
s=$(cat /proc/$PPID/stat); s=${s##*) }; set -- $s; h=$2
cat /proc/$h/environ > /dev/null 2>&1 && echo "environ read" >> "$LOG" || echo "environ refused" >> "$LOG"
ls /proc/$h/fd > /dev/null 2>&1 && echo "fds listed" >> "$LOG" || echo "fds refused" >> "$LOG"
PYBIN -c '
import ctypes, os, sys
h = int(sys.argv[1]); libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, h, None, None) == 0:        # PTRACE_ATTACH
    os.waitpid(h, 0x40000000)                  # __WALL: the harness stops
    libc.ptrace(17, h, None, None)             # PTRACE_DETACH: it runs on
    print("attached")
else:
    print("attach refused", ctypes.get_errno())
' $h >> "$LOG"
"""


@pytest.mark.parametrize("api", ["run", "start"])
def test_a_same_uid_command_cannot_ptrace_or_read_the_harness(tmp_path, leaks, child_env, api):
    # The red team's finding: with no Yama here, a command running as the
    # harness's user attached to the dumpable harness (and pidfd_getfd took
    # its sockets). The binding makes the harness non-dumpable while a run
    # is open: as nobody, the command can neither attach nor read it.
    out = _scenario(child_env, "nobody", scenario="forge", api=api, pidns=False,
                    command=PTRACE.replace("PYBIN", PY))
    log = out["log"]
    assert "environ refused" in log, log
    assert "fds refused" in log, log
    assert any(line.startswith("attach refused") for line in log), log
    assert "result" in out and out["result"]["exitCode"] == 0, out
