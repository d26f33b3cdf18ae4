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
