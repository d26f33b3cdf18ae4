"""The shell skill's four hardening tests (from the skill's own test suite), ported, plus hostile rows.

Like the skill's tests, which called the host handler with an AbortSignal,
the cancellation races drive the internal runner (shellsup._run.Run) to
cancel from a timer thread: a cancelled result is what the host saw.
"""

import shlex
import threading
import time

import pytest

import shellsup as shell
from shellsup import _validate
from shellsup._run import Run

MiB = 1 << 20
MARKER_64K = "\n... output truncated at 65536-byte capture limit ...\n"


class Recorder:
    def __init__(self):
        self.chunks = []

    def __call__(self, stream, text):
        self.chunks.append((stream, text))

    def joined(self, stream=None):
        return "".join(t for s, t in self.chunks if stream in (None, s))


def run_cancelled_after(command, timeout, after):
    """Run command and send a cancel frame after `after` seconds; return the result."""
    runner = Run(_validate.request(command, None, timeout, 65536, None, None), shell.find_binary(), None)
    runner.start()
    timer = threading.Timer(after, runner.cancel)
    timer.start()
    try:
        return runner.wait()
    finally:
        timer.cancel()


# 1. "shell.run shares one bounded budget between progress and final capture"


def test_one_budget_shared_by_progress_and_capture():
    progress = Recorder()
    result = shell.run(
        "head -c 3145728 /dev/zero | tr '\\0' O; head -c 3145728 /dev/zero | tr '\\0' E >&2",
        timeout=5, progress=progress,
    )
    assert result["exitCode"] == 0
    assert result["totalBytes"] == 6 * MiB
    assert result["truncated"] is True
    progress_bytes = len(progress.joined().encode())
    assert result["progressBytes"] == progress_bytes == result["capturedBytes"]
    assert progress.joined("stdout") == result["stdout"]
    assert progress.joined("stderr") == result["stderr"]
    assert progress_bytes <= 65536
    assert progress_bytes + result["capturedBytes"] <= 128 * 1024
    assert progress.joined().count("output truncated at") == 1
    assert (result["stdout"] + result["stderr"]).count("output truncated at") == 1
    # stdout came first and took the whole budget; the marker is on stdout.
    assert result["stdout"] == "O" * (65536 - len(MARKER_64K)) + MARKER_64K
    assert result["stderr"] == ""

    follow = Recorder()
    healthy = shell.run("printf healthy", progress=follow)
    assert healthy["stdout"] == "healthy"
    assert healthy["truncated"] is False
    assert healthy["progressBytes"] == 7 == len(follow.joined())


def test_overflow_on_stderr_puts_the_marker_on_stderr():
    progress = Recorder()
    # "late" comes well after stderr overflowed: the capture takes text in
    # arrival order across the streams, and shellsup reads both pipes at once.
    result = shell.run("head -c 100000 /dev/zero | tr '\\0' E >&2; sleep 0.3; echo late", progress=progress)
    assert result["stderr"].endswith(MARKER_64K) and result["stdout"] == ""
    assert result["totalBytes"] == 100000 + 5
    assert progress.joined("stderr") == result["stderr"]


def test_small_budget_names_itself_in_the_marker():
    result = shell.run("seq 1000", budget=100, progress=None)
    marker = "\n... output truncated at 100-byte capture limit ...\n"
    assert result["truncated"] and result["stdout"].endswith(marker)
    assert result["capturedBytes"] == 100 == len(result["stdout"].encode())


# 2. "shell.run timeout and cancellation races terminate the process group with one cause"


def test_timeout_and_cancellation_races_report_one_cause(tmp_path):
    marks = {name: tmp_path / name for name in ("timeout", "cancel", "both")}

    timed = shell.run(f"sleep 0.3; touch {shlex.quote(str(marks['timeout']))}", timeout=0.05, progress=None)
    assert timed["timedOut"] is True and timed["cancelled"] is False
    assert timed.cancel_reason is None and timed.cleanup["trigger"] == "timeout"

    cancelled = run_cancelled_after(f"sleep 0.3; touch {shlex.quote(str(marks['cancel']))}", timeout=5, after=0.03)
    assert cancelled["cancelled"] is True and cancelled["timedOut"] is False
    assert cancelled.cancel_reason == "request"

    causes = set()
    for _ in range(10):
        both = run_cancelled_after(f"sleep 5; touch {shlex.quote(str(marks['both']))}", timeout=0.05, after=0.05)
        assert both["cancelled"] != both["timedOut"], both
        causes.add("cancelled" if both["cancelled"] else "timedOut")

    time.sleep(0.45)  # the killed commands' tails would have run by now
    assert [name for name, path in marks.items() if path.exists()] == []

    after = shell.run("printf after-race", progress=None)
    assert after["stdout"] == "after-race" and not after["cancelled"] and not after["timedOut"]


def test_async_cancellation_stops_the_tail(tmp_path):
    import asyncio

    mark = tmp_path / "mark"

    async def main():
        task = asyncio.ensure_future(shell.run_async(f"sleep 0.3; touch {shlex.quote(str(mark))}", progress=None))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    time.sleep(0.45)
    assert not mark.exists()


# 3. "shell.run subreaper kills setsid descendants and bounds timeout settlement"


def test_setsid_child_is_killed_and_timeout_settles_fast(tmp_path):
    mark = tmp_path / "escaped"
    perl = (
        "if (fork() == 0) { POSIX::setsid(); select(undef, undef, undef, 0.35); "
        'open(my $f, ">", $ARGV[0]); print "escaped-output\\n"; exit 0 } sleep 5'
    )
    command = f"/usr/bin/perl -MPOSIX -e {shlex.quote(perl)} {shlex.quote(str(mark))}"
    start = time.monotonic()
    result = shell.run(command, timeout=0.05, progress=None)
    elapsed = time.monotonic() - start
    assert result["timedOut"] is True
    assert elapsed < 0.8, f"settled in {elapsed:.3f}s"
    assert "escaped-output" not in result["stdout"]
    time.sleep(0.45)
    assert not mark.exists()


# 4. "shell.run incrementally decodes split UTF-8 and handles invalid bytes deterministically"


def test_split_utf8_survives_across_reads():
    result = shell.run("printf '\\xe2'; sleep 0.03; printf '\\x82'; sleep 0.03; printf '\\xac'", progress=None)
    assert result["stdout"] == "€"
    assert result["totalBytes"] == 3 and result["capturedBytes"] == 3


@pytest.mark.parametrize("raw,text", [
    (b"\xff", "\ufffd"),
    (b"\xff\xfe", "\ufffd\ufffd"),
    (b"\xe2\x82A", "\ufffdA"),
    (b"\xe2\x82", "\ufffd"),  # incomplete at EOF
    (b"\xf0\x9f\x98\x80", "\U0001F600"),
    (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"),  # a surrogate is not UTF-8
], ids=["FF", "FF-FE", "E2-82-41", "E2-82-eof", "4-byte", "surrogate"])
def test_invalid_bytes_follow_python_replace(raw, text):
    escaped = "".join(f"\\x{b:02x}" for b in raw)
    result = shell.run(f"printf '{escaped}'", progress=None)
    assert result["stdout"] == text == raw.decode("utf-8", "replace")
    assert result["totalBytes"] == len(raw)
    assert result["capturedBytes"] == len(text.encode())


def test_lone_ff_counts_one_raw_byte_and_three_captured():
    result = shell.run("printf '\\xff'", progress=None)
    assert result["stdout"] == "\ufffd"
    assert result["totalBytes"] == 1 and result["capturedBytes"] == 3 and result["progressBytes"] == 3
