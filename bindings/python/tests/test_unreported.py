"""The real shellsup, attacked by its own command: it stops reporting, or dies without totals.

The binding must never leave shellsup running, must give it a chance to
clean up (SIGCONT, then a cancel and SIGTERM, then SIGKILL), and must raise
a ShellsupError that says what happened and what is known to be left.
"""

import asyncio
import os
import re
import time

import pytest

import shellsup as shell
from shellsup import _limits

STOPPER = "echo ready; kill -STOP $PPID; sleep 300 & setsid sleep 300 & wait"


def _call(mode, command, **kw):
    if mode == "sync":
        return shell.run(command, progress=None, **kw)
    return asyncio.run(shell.run_async(command, progress=None, **kw))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_stopped_shellsup_is_continued_and_cleans_up(leaks, monkeypatch, mode):
    monkeypatch.setattr(_limits, "WATCHDOG_MARGIN", 1.0)
    with pytest.raises(shell.ShellsupError) as exc:
        _call(mode, STOPPER, timeout=1, grace=0)
    err = exc.value
    assert err.category == "protocol"
    message = str(err)
    assert "did not report within 1 s timeout + 0 s grace + 1 s (it was stopped)" in message, message
    assert "the binding sent it SIGCONT" in message and "SIGTERM" in message, message
    # Continued, shellsup finished its cleanup and said so: nothing is left.
    assert "its cleanup had finished with nothing left" in message, message
    assert leaks.survivors() == []


def _default_tier():
    return shell.run("true", progress=None).cleanup["tier"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_shellsup_killed_by_its_command_is_reported_with_what_is_left(leaks, mode):
    # SIGKILL to shellsup. In the subreaper tier nobody is left to clean up:
    # the binding says so and names the command's pid; the test cleans up.
    # In the cgroup tier the binding kills the leaf the start frame named.
    tier = _default_tier()
    with pytest.raises(shell.ShellsupError) as exc:
        # the pause lets the start frame (which names the leaf) reach the
        # binding first; killed earlier, the leaf is left to the next start's sweep
        _call(mode, "sleep 0.3; kill -KILL $PPID; setsid sleep 300 & exec sleep 300", timeout=30)
    message = str(exc.value)
    assert exc.value.category == "protocol"
    assert "shellsup was killed by SIGKILL without reporting a result" in message, message
    if "cgroup" in tier.split("+"):
        # another shellsup starting meanwhile (its start sweeps the same parent)
        # may have swept the stale leaf first
        assert re.search(r"the binding killed every process in its cgroup leaf \S+ and removed it \(shellsup sweep "
                         r"killed [1-9][0-9]* processes\): nothing is left|its cgroup leaf \S+ was already gone", message), message
        assert leaks.survivors() == []
        return
    assert "may still be running" in message
    pid = int(message.split("bash pid ")[1].split(")")[0])
    left = leaks.wait_for(2, comm="sleep")
    assert pid in {p.pid for p in left}, (pid, left)  # the exec'd bash is that sleep
    leaks.kill(left)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_shellsup_killed_before_its_start_frame_is_swept(leaks, monkeypatch, mode):
    # A build with test seams holds the start frame back 500 ms, so the
    # command's SIGKILL always comes first (on a loaded machine it can in a
    # production build too). No leaf was named: the binding runs shellsup
    # sweep, which kills the dead shellsup's leaf in the cgroup tier.
    seams = os.environ.get("SHELLSUP_TESTSEAMS_BIN")
    if not seams:
        pytest.skip("needs SHELLSUP_TESTSEAMS_BIN (make test-python builds it)")
    tier = _default_tier()
    monkeypatch.setenv("SHELLSUP_BIN", seams)
    monkeypatch.setenv("SHELLSUP_TEST_START_DELAY", "500ms")
    with pytest.raises(shell.ShellsupError) as exc:
        _call(mode, "kill -KILL $PPID; setsid sleep 300 & exec sleep 300", timeout=30)
    message = str(exc.value)
    assert exc.value.category == "protocol"
    assert "shellsup was killed by SIGKILL without reporting a result" in message, message
    assert "no start frame arrived" in message, message
    if "cgroup" in tier.split("+"):
        # another shellsup starting meanwhile may have swept the stale leaf first
        assert re.search(r"the binding ran shellsup sweep: (killed [1-9][0-9]* processes in /\S+/shellsup-\d+-\d+-\d+-\d+-[0-9a-f]{32} "
                         r"and removed it|no cgroup leaf was left)", message), message
        assert leaks.survivors() == []
        return
    assert "the binding ran shellsup sweep: no cgroup leaf was left" in message, message
    leaks.kill(leaks.wait_for(2, comm="sleep"))


def test_a_leaf_that_is_not_shellsups_is_never_touched(tmp_path):
    from shellsup import _leaf

    fake = tmp_path / "not-a-leaf"
    fake.mkdir()
    (fake / "cgroup.kill").write_text("")
    assert "not a shellsup leaf" in _leaf.kill(str(fake))
    assert (fake / "cgroup.kill").read_text() == "", "nothing written"


FREEZER = "/sys/fs/cgroup/freezer"


@pytest.fixture
def frozen_cgroup(leaks):
    """A cgroup v1 freezer group: a process frozen there sits in D state and survives SIGKILL."""
    if not os.path.exists(os.path.join(FREEZER, "freezer.state")) and not os.path.isdir(FREEZER):
        pytest.skip(f"needs the cgroup v1 freezer at {FREEZER}")
    path = os.path.join(FREEZER, f"shellsup-pytest-{leaks.token}")
    try:
        os.mkdir(path)
    except OSError as exc:
        pytest.skip(f"needs a writable cgroup v1 freezer (root): {exc}")
    yield path
    with open(os.path.join(path, "freezer.state"), "w") as f:
        f.write("THAWED")  # the straggler dies of its pending SIGKILL
    end = time.monotonic() + 10
    while True:
        try:
            os.rmdir(path)
            break
        except OSError:
            assert time.monotonic() < end, f"cannot remove {path}"
            time.sleep(0.02)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_straggler_raises_cleanup_error_with_the_result(leaks, frozen_cgroup, mode):
    command = (f"sleep 300 & echo $! > {frozen_cgroup}/cgroup.procs && echo FROZEN > {frozen_cgroup}/freezer.state\n"
               f"while ! grep -q FROZEN {frozen_cgroup}/freezer.state; do sleep 0.01; done; echo ready")
    with pytest.raises(shell.CleanupError) as exc:
        _call(mode, command, timeout=30, grace=0.2)
    err = exc.value
    assert err.category == "cleanup_incomplete" and isinstance(err, shell.ShellsupError)
    result = err.result
    assert result["exitCode"] == 0 and "ready" in result["stdout"]  # bash itself exited normally
    assert result.status == "failed"  # shellsup cannot stand behind a run it did not clean up
    (straggler,) = result.cleanup["stragglers"]
    assert straggler["comm"] == "sleep" and straggler["state"] == "D"
    assert f"pid {straggler['pid']} 'sleep' state D" in str(err)
    assert "the command's exitCode was 0" in str(err)
    # Thaw (the fixture does it too) and wait for the straggler to die of its SIGKILL.
    with open(os.path.join(frozen_cgroup, "freezer.state"), "w") as f:
        f.write("THAWED")
    end = time.monotonic() + 10
    while leaks.survivors():
        assert time.monotonic() < end, leaks.survivors()
        time.sleep(0.02)
