"""result.status: one word for how the run ended, one test per word."""

import os
import signal

import pytest

import shellsup as shell

V2 = "/sys/fs/cgroup/unified"
LIMIT = 64 << 20
# Reads back the memory limit inside the command's leaf (v2, else v1) and exits 99 if it is not LIMIT.
MEMORY_CHECK = (f"v2={V2}$(sed -n 's/^0:://p' /proc/self/cgroup)/memory.max\n"
                "v1=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)/memory.limit_in_bytes\n"
                'if [ -r "$v2" ]; then m=$(cat "$v2"); else m=$(cat "$v1"); fi\n'
                f'[ "$m" = {LIMIT} ] || {{ echo "limit is $m"; exit 99; }}\n')
HOG = "/usr/bin/python3 -c \"b = b'x' * (300 << 20)\""


@pytest.mark.parametrize("command,word", [
    ("exit 0", "exited"),
    ("exit 4", "exited"),
    ("kill -9 $$", "signaled"),
])
def test_exited_and_signaled(command, word):
    result = shell.run(command, progress=None)
    assert result.status == word
    assert "status" not in result  # an attribute beside cleanup: the 13 keys are unchanged


def test_timeout():
    assert shell.run("sleep 5", timeout=0.2, progress=None).status == "timeout"


def test_cancelled_by_kill():
    job = shell.start("echo ready; sleep 30")
    job.wait_for("ready", timeout=10)
    result = job.kill()
    assert result["cancelled"] and result.status == "cancelled"


def test_cancelled_by_sigterm_to_shellsup():
    job = shell.start("echo ready; sleep 30")
    job.wait_for("ready", timeout=10)
    os.kill(job.pid, signal.SIGTERM)
    result = job.wait(timeout=10)
    assert result.cancel_reason == "signal" and result.status == "cancelled"


@pytest.mark.parametrize("tail,word", [(HOG, "oom"), (HOG + "; echo hog exit $?", "exited")])
def test_oom_under_a_verified_memory_limit(tail, word):
    """A hog killed at max_memory is oom when bash's status shows it; a bash that goes on to exit 0 exited."""
    if os.geteuid() != 0:
        pytest.skip("needs root for a cgroup leaf with a memory limit")
    try:
        result = shell.run(MEMORY_CHECK + tail, progress=None, max_memory=LIMIT, timeout=60)
    except shell.ShellsupError as exc:
        if exc.category == "containment_unavailable":
            pytest.skip(f"no memory control here: {exc}")
        raise
    assert result["exitCode"] != 99, result["stdout"]
    assert result.cleanup.get("oomKills", 0) >= 1, result["stdout"]
    assert result.status == word

