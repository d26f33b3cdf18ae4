"""The real shellsup, attacked by its own command: it stops reporting, or dies without totals.

The binding must never leave shellsup running, must give it a chance to
clean up (SIGCONT, then a cancel and SIGTERM, then SIGKILL), and must raise
a ShellsupError that says what happened and what is known to be left.
"""

import asyncio
import os

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


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_shellsup_killed_by_its_command_is_reported_with_what_is_left(leaks, mode):
    # SIGKILL to shellsup: nobody is left to clean up in this tier. The
    # binding says so and names the command's pid; the test cleans up.
    with pytest.raises(shell.ShellsupError) as exc:
        _call(mode, "kill -KILL $PPID; exec sleep 300", timeout=30)
    message = str(exc.value)
    assert exc.value.category == "protocol"
    assert "shellsup was killed by SIGKILL without reporting a result" in message, message
    assert "may still be running" in message
    pid = int(message.split("bash pid ")[1].split(")")[0])
    left = leaks.wait_for(1, comm="sleep")
    assert pid in {p.pid for p in left}, (pid, left)  # the exec'd bash is that sleep
    leaks.kill(left)
