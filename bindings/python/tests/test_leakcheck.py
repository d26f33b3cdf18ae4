"""Negative control: the leak check finds a process started with the token outside shellsup."""

import subprocess

import pytest


def test_scan_finds_a_deliberate_leak(leaks):
    # A process tagged with the token, started without shellsup, with its own
    # self-destruct timer in case everything below fails.
    helper = subprocess.Popen(["timeout", "-s", "KILL", "60", "sleep", "60"], env=leaks.env(),
                              start_new_session=True)
    try:
        leaks.wait_for(1, comm="sleep")  # timeout has exec'd its child
        found = leaks.survivors()
        assert {p.comm for p in found} == {"timeout", "sleep"}
        assert helper.pid in {p.pid for p in found}
    finally:
        leaks.kill(leaks.survivors())
        helper.wait(timeout=5)
    # The sleep was timeout's child: killed too, and reaped by init.
    assert leaks.survivors() == []


def test_scan_ignores_other_tokens(leaks):
    helper = subprocess.Popen(["sleep", "60"], env=leaks.env(SHELLSUP_LEAK_TOKEN="someone-else"))
    try:
        assert leaks.survivors() == []
    finally:
        helper.kill()
        helper.wait(timeout=5)


def test_kill_rechecks_identity(leaks):
    """A process that no longer holds the token (a reused pid) is not signalled."""
    other = subprocess.Popen(["sleep", "60"], env=leaks.env(SHELLSUP_LEAK_TOKEN="someone-else"))
    try:
        from conftest import Proc

        leaks.kill([Proc(other.pid, "sleep", "pretend it held the token")])
        with pytest.raises(subprocess.TimeoutExpired):
            other.wait(timeout=0.1)  # still alive: not ours
    finally:
        other.kill()
        other.wait(timeout=5)
