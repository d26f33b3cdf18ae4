"""Interactive runs and jobs: a terminal (--pty), a stdin pipe (--stdin pipe), input, expect, idle.

docs/interactive.md is the user's guide. Input goes to shellsup as control
frames over the job's control socket, in frames of at most INPUT_CHUNK
bytes, with at most IN_FLIGHT bytes beyond what shellsup says it has taken
(its taken frames): shellsup then reads a cancel at once even when the
program reads nothing, and a program that does not read holds the writer,
never memory. Each frame is sent only when the socket has room for it, so a
write never blocks while holding the lock other senders (cancel) take.
"""

from __future__ import annotations

import math
import os
import re
import select
import time
from typing import Any, Optional

from . import _frames
from ._errors import JobTimeoutError
from ._interactive_opts import Interactive
from ._jobargs import check_pattern, check_wait_timeout
from ._spillread import SpillReader
from ._validate import _in_range, _is_number, _shown, invalid, quote

# A job is passed as Any: _job imports this module, and the package's modules import without a cycle.
Job = Any

INPUT_CHUNK = 64 * 1024  # bytes of input per frame
IN_FLIGHT = 1 << 20  # bytes of input sent beyond shellsup's last taken frame, at most
MAX_PTY_SIDE = 10000  # columns or rows, as shellsup's --pty-size
MAX_IDLE_TIMEOUT = 7 * 24 * 3600  # seconds, a job's longest lifetime
SIGNALS = ("INT", "QUIT", "TSTP", "HUP", "TERM", "CONT")
EXPECT_WINDOW = 1 << 20  # characters of output since the last expect that expect searches, at most
EXPECT_STEP = 1 << 20  # bytes one scan reads of a stream
POLL = 0.01  # seconds between looks at the spill files


def check_interactive(pty: Any = False, pty_size: Any = None, stdin: Any = False, idle_timeout: Any = None,
                      run: bool = False) -> Interactive:
    """Check the interactive arguments of run() (run=True: a pty run stops when the program waits for input)
    or start()."""
    if not isinstance(pty, bool):
        raise invalid(f"pty must be True or False (got {quote(pty)})")
    if not isinstance(stdin, bool):
        raise invalid(f"stdin must be True or False (got {quote(stdin)})")
    if pty and stdin:
        raise invalid("pty and stdin exclude each other: with pty=True the terminal is the command's stdin")
    size = None
    if pty_size is not None:
        ok = (isinstance(pty_size, (tuple, list)) and len(pty_size) == 2
              and all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= MAX_PTY_SIDE for n in pty_size))
        if not ok:
            raise invalid(f"pty_size must be (cols, rows), two whole numbers from 1 to {MAX_PTY_SIDE} (got {quote(pty_size)})")
        if not pty:
            raise invalid(f"pty_size {quote(tuple(pty_size))} needs pty=True")
        size = (int(pty_size[0]), int(pty_size[1]))
    if idle_timeout is not None:
        if not _is_number(idle_timeout):
            raise invalid(f"idle_timeout must be a number of seconds greater than 0 and at most {MAX_IDLE_TIMEOUT} "
                          f"(got {quote(idle_timeout)} of type {type(idle_timeout).__name__})")
        if not _in_range(idle_timeout, 0, MAX_IDLE_TIMEOUT, low_open=True):
            raise invalid(f"idle-timeout must be greater than 0 and at most {MAX_IDLE_TIMEOUT} seconds "
                          f"(got {_shown(idle_timeout)})")
    return Interactive(pty=pty, pty_size=size, stdin_pipe=stdin, idle_timeout=idle_timeout, stop_on_input=run and pty)


# -- a job's input -----------------------------------------------------------------------


def _interactive(job: Job) -> Interactive:
    return job._request.interactive


def need_input(job: Job, what: str) -> None:
    it = _interactive(job)
    if not (it.pty or it.stdin_pipe):
        raise invalid(f"{what} needs a job started with pty=True or stdin=True (job {job.name!r} has neither)")


def write(job: Job, data: Any) -> None:
    """Send data (str as UTF-8, or bytes) to the job's terminal or stdin; returns once shellsup has all of it."""
    need_input(job, "write()")
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    elif not isinstance(data, bytes):
        raise invalid(f"write() takes str or bytes (got {quote(data)} of type {type(data).__name__})")
    mark_input(job)
    for at in range(0, len(data), INPUT_CHUNK):
        chunk = data[at:at + INPUT_CHUNK]
        while job._input_sent - job._core.session.input_taken >= IN_FLIGHT:
            if _stopping(job):
                return
            job._finished.wait(0.002)
        if not send(job, _frames.encode({"type": "input", "data": chunk})):
            return
        job._input_sent += len(chunk)
    mark_input(job)


def _stopping(job: Job) -> bool:
    """The job has ended or is being cancelled: input is no longer sent."""
    return (job._finished.is_set() or job._core.session.done or job._forked
            or job._core.session.announced is not None or getattr(job._core, "_cancel_sent", False))


def mark_input(job: Job) -> None:
    """Input was sent: a waiting frame before now no longer holds; the output is not idle."""
    job._input_count += 1
    job._input_at = time.monotonic()


def send(job: Job, frame: bytes) -> bool:
    """Send one control frame once the control socket has room for it; False (nothing sent) once the job is
    ending."""
    proc = job._runner._proc
    while True:
        if proc is None or _stopping(job):
            return False
        control = proc.control
        if control is None:
            return False
        try:
            _, writable, _ = select.select([], [control], [], 0.05)
        except (OSError, ValueError):
            return False  # closed meanwhile: the job is ending
        if not writable:
            continue
        with job._runner._lock:
            # Writable (a quarter of the send buffer or less in use) leaves room for a whole frame.
            return job._send(frame)


def send_eof(job: Job) -> None:
    need_input(job, "send_eof()")
    mark_input(job)
    send(job, _frames.encode({"type": "eof"}))


def signal(job: Job, name: Any) -> None:
    need_input(job, "signal()")
    if not isinstance(name, str) or name.upper().removeprefix("SIG") not in SIGNALS:
        raise invalid(f"signal must be one of {', '.join(SIGNALS)} (got {quote(name)})")
    send(job, _frames.encode({"type": "signal", "signal": name.upper().removeprefix("SIG")}))


def resize(job: Job, cols: Any, rows: Any) -> None:
    if not _interactive(job).pty:
        raise invalid(f"resize() needs a job started with pty=True (job {job.name!r} has no terminal)")
    for n, what in ((cols, "cols"), (rows, "rows")):
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_PTY_SIDE:
            raise invalid(f"{what} must be a whole number from 1 to {MAX_PTY_SIDE} (got {quote(n)})")
    send(job, _frames.encode({"type": "resize", "cols": cols, "rows": rows}))


# -- expect ------------------------------------------------------------------------------


class Expecter:
    """The output since the last expect() (stdout; with a stdin pipe stderr too, each read in turn)."""

    def __init__(self, job: Job) -> None:
        streams = ("stdout",) if _interactive(job).pty else ("stdout", "stderr")
        self._readers = [SpillReader(os.path.join(job.spill, s)) for s in streams]
        self._buf = ""

    def expect(self, job: Job, pattern: Any, timeout: Any) -> "re.Match[str]":
        rx = _compile(pattern)
        limit = check_wait_timeout(timeout)
        deadline = math.inf if limit is None else time.monotonic() + limit
        while True:
            ended = job._finished.is_set()  # before reading: then what is read is all there is
            self._read(ended)
            m = rx.search(self._buf)
            if m is not None:
                self._buf = self._buf[m.end():]
                return m
            if ended:
                raise job._ended_error(f"expect({rx.pattern!r}) matched")
            if time.monotonic() >= deadline:
                raise JobTimeoutError(f"expect({rx.pattern!r}) found no match in the output of job {job.name!r} "
                                      f"within {limit:g} s; the job was left running; the output since the last "
                                      f"expect ends with: {self._buf[-500:]!r}")
            job._finished.wait(POLL)

    def _read(self, ended: bool) -> None:
        for r in self._readers:
            while True:
                n = min(max(0, r.size() - r.offset), EXPECT_STEP)
                if n == 0:
                    if ended and not r.flushed:
                        self._buf += r.take(0, True)
                    break
                self._buf += r.take(n, False)
                if len(self._buf) > EXPECT_WINDOW:
                    self._buf = self._buf[-EXPECT_WINDOW:]

    def close(self) -> None:
        for r in self._readers:
            r.close()


def _compile(pattern: Any) -> "re.Pattern[str]":
    """The pattern expect() waits for: wait_for's rule, except that it is required."""
    compiled = check_pattern(pattern, optional=False)
    assert compiled is not None
    return compiled


# -- idle ---------------------------------------------------------------------------------


def wait_idle(job: Job, quiet: Any, timeout: Any) -> None:
    """Return once the job's output (both spill files) has not grown for quiet seconds; the job keeps running.
    Raises JobError if the job ends first, JobTimeoutError when timeout runs out."""
    if not _is_number(quiet) or not _in_range(quiet, 0, MAX_IDLE_TIMEOUT, low_open=True):
        raise invalid(f"idle must be a number of seconds greater than 0 (got {quote(quiet)})")
    limit = check_wait_timeout(timeout)
    deadline = math.inf if limit is None else time.monotonic() + limit
    size, since = -1, time.monotonic()
    while True:
        if job._finished.is_set():
            raise job._ended_error(f"its output was quiet for {quiet:g} s")
        now = time.monotonic()
        n = sum(r.size() for r in job._readers.values()) + job._input_count
        if n != size:
            size, since = n, now
        elif now - since >= quiet:
            return
        if now >= deadline:
            raise JobTimeoutError(f"job {job.name!r} kept printing: its output was never quiet for {quiet:g} s "
                                  f"within {limit:g} s; the job was left running")
        job._finished.wait(min(0.05, quiet / 4))


def waiting(job: Job) -> bool:
    """The last waiting frame still holds: no output and no input since shellsup sent it."""
    w = job._core.session.waiting
    if w is None or not job.running:
        return False
    out = sum(r.size() for r in job._readers.values())
    return out == w.get("bytes") and job._core.session.waiting_at > job._input_at


def prompt(job: Job) -> Optional[str]:
    """The prompt of the last waiting frame while it holds, else None."""
    if not waiting(job):
        return None
    p = job._core.session.waiting.get("prompt")
    return p if isinstance(p, str) else ""
