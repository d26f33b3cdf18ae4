"""A shellsup that misbehaves: the binding reports it as ShellsupError and never hangs.

The fakes are small Python programs standing in for the binary through
SHELLSUP_BIN. Each has a self-destruct alarm; each carries the test's token,
so the leaks fixture also proves the binding did not leave one running.
"""

import asyncio
import os
import sys
import textwrap
import time

import pytest

import shellsup as shell
from shellsup import _limits

HEADER = f"""#!{sys.executable}
import os, signal, struct, sys, time
import msgpack
signal.alarm(60)
def frame(obj):
    body = msgpack.packb(obj, use_bin_type=True)
    os.write(1, struct.pack(">I", len(body)) + body)
START = {{"type": "start", "version": 1, "pid": os.getpid(), "childPid": 0, "command": sys.argv[-1],
         "cwd": "/", "timeout": 1.0, "budget": 65536, "containment": "fake"}}
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    def install(body):
        path = tmp_path / "fake-shellsup"
        path.write_text(HEADER + textwrap.dedent(body))
        path.chmod(0o755)
        monkeypatch.setenv("SHELLSUP_BIN", str(path))
        return path
    return install


def both(command="echo x", **kw):
    """Run through run() and run_async(); return the two exceptions."""
    errors = []
    for call in (lambda: shell.run(command, progress=None, **kw),
                 lambda: asyncio.run(shell.run_async(command, progress=None, **kw))):
        with pytest.raises(shell.ShellsupError) as exc:
            call()
        errors.append(exc.value)
    return errors


def test_exit_without_a_result_is_a_protocol_error(fake):
    fake("""
        sys.stderr.write("panic: something broke\\n")
        sys.exit(3)
    """)
    for err in both():
        assert err.category == "protocol"
        assert "exited with status 3" in str(err) and "panic: something broke" in str(err)


def test_exit_after_start_without_totals_is_a_protocol_error(fake):
    fake("""
        frame(START)
        frame({"type": "progress", "stream": "stdout", "text": "x"})
        sys.exit(0)
    """)
    for err in both():
        assert err.category == "protocol" and "without reporting a result" in str(err)


@pytest.mark.parametrize("category", ["containment_unavailable", "exec_failed", "internal", "validation"])
def test_error_frames_raise_their_category(fake, category):
    fake(f"""
        frame({{"type": "error", "category": {category!r}, "message": "the reason"}})
        sys.exit(125)
    """)
    for err in both():
        assert (err.category, str(err)) == (category, "the reason")


def test_oversized_frame_is_refused_and_shellsup_told_to_stop(fake):
    # Announces a 2 MiB frame, then waits for EOF on stdin as shellsup would.
    fake("""
        frame(START)
        os.write(1, struct.pack(">I", 2 << 20))
        sys.stdin.buffer.read()
        sys.exit(130)
    """)
    for err in both():
        assert err.category == "protocol" and "over the 1048576-byte limit" in str(err)


def test_garbage_frame_is_a_protocol_error(fake):
    fake("""
        frame(START)
        os.write(1, struct.pack(">I", 3) + b"\\xc1\\xc1\\xc1")
        sys.stdin.buffer.read()
    """)
    for err in both():
        assert err.category == "protocol" and "undecodable frame" in str(err)


def test_a_shellsup_that_never_reports_is_killed_after_bounded_waits(fake, monkeypatch):
    # Ignores cancel frames, EOF and SIGTERM: only the binding's SIGKILL ends it.
    fake("""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        frame(START)
        time.sleep(60)
    """)
    monkeypatch.setattr(_limits, "WATCHDOG_MARGIN", 0.3)
    start = time.monotonic()
    for err in both(timeout=0.1, grace=0):
        assert err.category == "protocol" and "did not report within" in str(err)
        assert "nor after SIGTERM" in str(err) and "shellsup was killed by the binding" in str(err)
        assert "the binding sent it SIGCONT, SIGTERM, SIGCONT, SIGKILL" in str(err)
        assert "the command (bash pid 0) and its descendants may still be running" in str(err)
    assert time.monotonic() - start < 4


def test_interrupt_with_an_unresponsive_shellsup_is_bounded(fake, monkeypatch, leaks):
    fake("""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        frame(START)
        frame({"type": "progress", "stream": "stdout", "text": "ready"})
        time.sleep(60)
    """)
    monkeypatch.setattr(_limits, "WATCHDOG_MARGIN", 0.3)

    def interrupt(stream, text):
        raise KeyboardInterrupt

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as exc:
        shell.run("x", grace=0, progress=interrupt)
    assert time.monotonic() - start < 3
    if hasattr(exc.value, "__notes__"):
        assert "was killed by the binding" in exc.value.__notes__[0]


def test_unexecutable_binary_is_exec_failed(tmp_path, monkeypatch):
    bogus = tmp_path / "shellsup"
    bogus.write_bytes(b"\x00\x01 not an executable format")
    bogus.chmod(0o755)
    monkeypatch.setenv("SHELLSUP_BIN", str(bogus))
    for err in both():
        assert err.category == "exec_failed" and str(bogus) in str(err)


def test_huge_environment_is_exec_failed(monkeypatch):
    # Each variable fits, together they exceed the kernel's argument+environment space.
    env = {"HOME": os.environ["HOME"], "SHELLSUP_LEAK_TOKEN": os.environ["SHELLSUP_LEAK_TOKEN"]}
    env.update({f"BIG{i}": "x" * 100000 for i in range(200)})
    for err in both(env=env):
        assert err.category == "exec_failed" and "Argument list too long" in str(err)


TOTALS = """{"type": "totals", "command": sys.argv[-1], "cwd": "/", "stdout": "ALL TESTS PASSED", "stderr": "",
          "exitCode": 0, "signal": None, "cancelled": False, "timedOut": False, "truncated": False,
          "totalBytes": 16, "capturedBytes": 16, "progressBytes": 0, "durationMs": 1, "cancelReason": "",
          "cleanup": {"tier": "fake", "trigger": "exit", "signalled": 0, "killed": 0, "reaped": 1,
                      "rounds": 0, "stragglers": STRAGGLERS, "stragglersOmitted": 0, "ms": 0,
                      "drainTimedOut": False}}"""


@pytest.mark.parametrize("after", [
    'frame({"type": "progress", "stream": "stdout", "text": "late"})',
    "frame(START)",
    "frame(" + TOTALS + ")",  # a forged totals followed by the real one, or the other way round
    'os.write(1, b"\\x00\\x00")',  # stray bytes
], ids=["progress", "start", "second-totals", "stray-bytes"])
def test_anything_after_totals_is_a_protocol_error(fake, after):
    fake(f"""
        STRAGGLERS = []
        frame(START)
        frame({TOTALS})
        {after}
        sys.exit(0)
    """)
    for err in both():
        assert err.category == "protocol", err
        assert "protocol:" in str(err) and "exited with status 0" in str(err)


def test_a_second_start_is_a_protocol_error(fake):
    fake(f"""
        STRAGGLERS = []
        frame(START)
        frame(START)
        sys.stdin.buffer.read()
        sys.exit(130)
    """)
    for err in both():
        assert err.category == "protocol" and "second start frame" in str(err)
        assert "bash pid 0" in str(err)  # what is known: the command of that start may be running


def test_stragglers_raise_cleanup_error_with_the_result(fake):
    import pickle

    fake(f"""
        STRAGGLERS = [{{"pid": 77, "comm": "stuck", "state": "D", "reason": "uninterruptible sleep (D state)"}}]
        frame(START)
        frame({TOTALS})
        sys.exit(125)
    """)
    errors = []
    for call in (lambda: shell.run("x", progress=None),
                 lambda: asyncio.run(shell.run_async("x", progress=None))):
        with pytest.raises(shell.CleanupError) as exc:
            call()
        errors.append(exc.value)
    for err in errors:
        assert isinstance(err, shell.ShellsupError) and isinstance(err, RuntimeError)
        assert err.category == "cleanup_incomplete"
        assert "1 process(es) survived" in str(err) and "pid 77 'stuck' state D" in str(err)
        assert err.result["exitCode"] == 0 and err.result["stdout"] == "ALL TESTS PASSED"
        assert err.result.cleanup["stragglers"][0]["pid"] == 77
        again = pickle.loads(pickle.dumps(err))
        assert (type(again), str(again), again.category, dict(again.result)) == (
            shell.CleanupError, str(err), "cleanup_incomplete", dict(err.result))
    assert str(errors[0]) == str(errors[1])


def test_a_shellsup_that_closes_stdout_and_hangs_is_killed(fake, monkeypatch):
    # No frame can come after EOF on stdout: the binding waits EXIT_WAIT, not the run's deadline.
    fake("""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        frame(START)
        os.close(1)
        time.sleep(60)
    """)
    monkeypatch.setattr(_limits, "EXIT_WAIT", 0.3)
    for err in both(timeout=300):
        assert err.category == "protocol"
        assert "shellsup was killed by the binding without reporting a result" in str(err)
        assert "may still be running" in str(err)
