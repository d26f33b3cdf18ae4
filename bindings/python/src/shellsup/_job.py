"""Background jobs: a shellsup run that the caller does not wait for.

A job is shellsup in frames mode with ``--lifetime`` instead of a call
timeout and ``--spill`` always on, driven by the same core as run()
(``_core.Core`` through ``_run.Run``) in a reader thread of its own. The
thread consumes every frame (progress, ports answers, totals) into the
job's state; the caller reads the output from the spill files, so every
byte is seen exactly once and in order, however far past the budget.

Every job dies with its owner: atexit cancels the live jobs and waits for
their cleanup; if the process dies without running atexit (SIGKILL,
os._exit), each job's shellsup sees its control pipe reach EOF and cleans
up by itself ("parent-gone"). A forked child closes its copies of the
control pipes, so a fork never keeps a job alive.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import math
import os
import re
import shutil
import signal
import socket
import stat
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, fields
from typing import Any, Dict, List, Mapping, Optional, Pattern, Tuple, Union

from . import _frames, _limits
from ._errors import ShellsupError
from ._find import find_binary
from ._result import SkillResult
from ._run import Run
from ._validate import Request, check_grace, invalid, quote, request

MAX_LIFETIME = 7 * 24 * 3600  # seconds: shellsup's --lifetime ceiling
DEFAULT_LIFETIME = 3600
READ_LIMIT = 64 * 1024  # bytes of both streams one read() returns at most
TAIL_BYTES = 1 << 20  # bytes of each stream output(tail=N) looks back at most
SCAN_CARRY = 64 * 1024  # characters a pattern may span across two scans
SCAN_STEP = 1 << 20  # bytes of each stream one scan reads
START_WAIT = 60.0  # seconds start() waits for shellsup's start frame
PORTS_WAIT = 5.0  # seconds a ports query waits for its answer
PROBE_TIMEOUT = 2.0  # seconds one connect or HTTP request may take
STREAMS = ("stdout", "stderr")
SPILL_SUFFIX = {"": 0, "K": 10, "M": 20, "G": 30}

JOB_EXITED = "job_exited"
JOB_TIMEOUT = "timeout"


class JobError(ShellsupError):
    """A job ended before what was awaited happened (category ``"job_exited"``).

    ``result`` holds the job's SkillResult (exit code, captured output,
    cleanup) when it is known; the message quotes the exit code and the last
    lines of the output.
    """

    def __init__(self, message: str, category: str = JOB_EXITED, result: Optional[SkillResult] = None) -> None:
        super().__init__(message, category)
        self.result = result

    def __reduce__(self) -> Any:
        return (type(self), (self.message, self.category, self.result))


class JobTimeoutError(JobError, TimeoutError):
    """A wait on a job ran out of time (category ``"timeout"``); the job is left running."""

    def __init__(self, message: str, category: str = JOB_TIMEOUT, result: Optional[SkillResult] = None) -> None:
        super().__init__(message, category, result)


@dataclass
class Output:
    """Text of a job's two streams, decoded as shellsup decodes (U+FFFD for invalid UTF-8).

    more: bytes were left unread (read() returns at most its limit; read again).
    cut: a spill file reached its limit: bytes after it were dropped.
    eof: the job has ended and this is the end of its output (read() returns
        nothing more).
    """

    stdout: str = ""
    stderr: str = ""
    more: bool = False
    cut: bool = False
    eof: bool = False

    def __str__(self) -> str:
        return self.stdout + self.stderr


@dataclass(frozen=True)
class JobRequest(Request):
    """A run request with a lifetime instead of a timeout, and a spill directory."""

    lifetime: float = DEFAULT_LIFETIME
    spill_dir: str = ""
    spill_max: Optional[int] = None

    def argv(self, binary: str) -> List[str]:
        args = super().argv(binary)
        at = args.index("--timeout")
        args[at: at + 2] = ["--lifetime", args[at + 1]]
        extra = ["--spill", self.spill_dir]
        if self.spill_max is not None:
            extra += ["--spill-max", str(self.spill_max)]
        end = len(args) - 2  # before "--", command
        return args[:end] + extra + args[end:]


# -- checking a job's arguments ----------------------------------------------------


def check_lifetime(lifetime: Any) -> Union[int, float]:
    if lifetime is None:
        return DEFAULT_LIFETIME
    if not isinstance(lifetime, (int, float)) or isinstance(lifetime, bool):
        raise invalid(f"lifetime must be a number of seconds greater than 0 and at most {MAX_LIFETIME} (7 days) "
                      f"(got {quote(lifetime)} of type {type(lifetime).__name__})")
    if (isinstance(lifetime, float) and math.isnan(lifetime)) or not 0 < lifetime <= MAX_LIFETIME:
        shown = repr(float(lifetime)) if isinstance(lifetime, float) else str(lifetime)
        raise invalid(f"lifetime must be greater than 0 and at most {MAX_LIFETIME} seconds (7 days) (got {shown[:80]})")
    return lifetime


def check_spill_dir(spill: Any) -> Optional[str]:
    """None (a private temporary directory), or a directory only its owner can write."""
    if spill is None:
        return None
    try:
        path = os.fsdecode(os.fspath(spill))
    except TypeError:
        raise invalid(f"spill must be a directory path or None (got {quote(spill)} of type {type(spill).__name__})") from None
    if path == "":
        raise invalid('spill must be a directory path or None (got "")')
    absolute = os.path.abspath(path)
    try:
        st = os.lstat(absolute)
    except FileNotFoundError:
        raise invalid(f"spill directory {quote(path)} does not exist") from None
    except OSError as exc:
        raise invalid(f"spill directory {quote(path)} cannot be used: {exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise invalid(f"spill directory {quote(path)} is a symbolic link; name the directory itself")
    if not stat.S_ISDIR(st.st_mode):
        raise invalid(f"spill directory {quote(path)} is not a directory")
    if st.st_mode & 0o022:
        raise invalid(f"spill directory {quote(path)} is writable by group or others (mode {st.st_mode & 0o7777:04o}); "
                      "use a directory only its owner can write")
    if not os.access(absolute, os.W_OK | os.X_OK):
        raise invalid(f"spill directory {quote(path)} is not writable")
    return absolute


def check_spill_max(spill_max: Any) -> Optional[int]:
    """None (shellsup's 256 MiB), bytes, or a string such as "64M" (powers of 1024)."""
    if spill_max is None:
        return None
    value = None
    if isinstance(spill_max, int) and not isinstance(spill_max, bool):
        value = spill_max
    elif isinstance(spill_max, str):
        text = spill_max.strip().upper()
        unit = text[-1:] if text[-1:] in SPILL_SUFFIX else ""
        digits = text[: len(text) - len(unit)]
        if digits.isdigit():
            value = int(digits) << SPILL_SUFFIX[unit]
    if value is None or not 0 <= value < 1 << 63:
        raise invalid("spill_max must be None or a whole number of bytes, at least 0, or a string with a K, M or G "
                      f"suffix (powers of 1024), e.g. \"64M\" (got {quote(spill_max)})")
    return value


def check_name(name: Any, command: str) -> str:
    if name is None:
        return command if len(command) <= 60 else command[:57] + "..."
    if not isinstance(name, str) or not name:
        raise invalid(f"name must be a non-empty string or None (got {quote(name)})")
    return name


def check_pattern(pattern: Any) -> Optional[Pattern[str]]:
    if pattern is None:
        return None
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise invalid(f"pattern must be a text (str) regular expression (got {quote(pattern.pattern)})")
        return pattern
    if not isinstance(pattern, str) or pattern == "":
        raise invalid(f"pattern must be a non-empty regular expression string or None (got {quote(pattern)})")
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise invalid(f"pattern {quote(pattern)} is not a valid regular expression: {exc}") from None


def check_port(port: Any) -> Optional[int]:
    if port is None:
        return None
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise invalid(f"port must be a TCP port number from 1 to 65535 or None (got {quote(port)})")
    return port


def check_url(url: Any) -> Optional[str]:
    if url is None:
        return None
    parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid(f"url must be an http:// or https:// URL with a host, or None (got {quote(url)})")
    return url


def check_wait_timeout(timeout: Any, name: str = "timeout") -> Optional[float]:
    if timeout is None:
        return None
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or math.isnan(timeout) or timeout < 0:
        raise invalid(f"{name} must be a number of seconds, at least 0, or None (got {quote(timeout)})")
    return float(timeout)


# -- the job's registry: what dies with the owner ----------------------------------------

_live: "Dict[int, Job]" = {}  # id(job) -> job, for jobs() and the owner's exit
_owned: "Dict[int, Job]" = {}  # jobs whose spill directory the binding made
_registry_lock = threading.Lock()


def jobs() -> "List[Job]":
    """This process's jobs that are still running, oldest first."""
    with _registry_lock:
        found = list(_live.values())
    return [job for job in found if job.running]


def _at_exit() -> None:
    """The owner is exiting: cancel every live job, wait for its cleanup, remove the binding's spill dirs."""
    with _registry_lock:
        live = list(_live.values())
        owned = list(_owned.values())
    for job in live:
        job._cancel()
    for job in live:
        job._finished.wait(job._cleanup_bound())
    for job in owned:
        try:
            job.close()
        except ShellsupError:
            pass  # still running after every bound: its files stay


def _after_fork_in_child() -> None:
    """A forked child must not hold the jobs' control pipes: the owner's death would not reach them."""
    global _registry_lock
    _registry_lock = threading.Lock()  # the parent's may have been held by another thread
    for job in list(_live.values()):
        job._forked = True
        proc = job._runner._proc
        if proc is not None and proc.proc.stdin is not None:
            try:
                proc.proc.stdin.close()
            except OSError:
                pass
    _live.clear()
    _owned.clear()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# -- reading the spill files ---------------------------------------------------------------


class _Reader:
    """One stream's spill file read incrementally: offset, decoder, end."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.flushed = False
        self._fd: Optional[int] = None

    def size(self) -> int:
        fd = self._open()
        return os.fstat(fd).st_size if fd is not None else 0

    def take(self, n: int, final: bool) -> str:
        """Decode the next n bytes; final flushes a code point cut off by the end of the stream."""
        data = b""
        fd = self._open()
        while fd is not None and len(data) < n:
            chunk = os.pread(fd, n - len(data), self.offset + len(data))
            if not chunk:
                break
            data += chunk
        self.offset += len(data)
        text = self.decoder.decode(data, final)
        if final:
            self.flushed = True
        return text

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _open(self) -> Optional[int]:
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
        return self._fd


def _tail_lines(path: str, lines: int, max_bytes: int = TAIL_BYTES) -> str:
    """The last lines of a file, looking back at most max_bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - max_bytes)
        data = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    if start > 0:  # began mid-file: skip to a code point's first byte
        skip = 0
        while skip < 3 and skip < len(data) and 0x80 <= data[skip] <= 0xBF:
            skip += 1
        data = data[skip:]
    text = data.decode("utf-8", "replace")
    if lines <= 0:
        return ""
    kept = text.splitlines(keepends=True)[-lines:]
    return "".join(kept)


# -- the job ------------------------------------------------------------------------------------


class Job:
    """A command running in the background under shellsup; made by start().

    read() returns new output, output(tail=N) the last lines, wait_for()
    waits until the job is ready, wait() and kill() return its result.
    ``pid`` is shellsup's; ``spill`` the directory holding its raw output.
    A context manager: leaving the block kills the job and closes it.
    """

    def __init__(self, req: JobRequest, binary: str, name: str, owned_dir: Optional[str]) -> None:
        self.name = name
        self._request = req
        self._owned_dir = owned_dir  # the temporary directory the binding made, removed by close()
        self._runner = Run(req, binary, None)
        self._finished = threading.Event()  # the reader thread is done: result or exception known
        self._result: Optional[SkillResult] = None
        self._exc: Optional[BaseException] = None
        self._read_lock = threading.Lock()
        self._readers: Dict[str, _Reader] = {}
        self._forked = False
        self._closed = False
        self._waiters: List[Tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._thread = threading.Thread(target=self._drive, name=f"shellsup job {name}", daemon=True)

    # -- starting ---------------------------------------------------------------

    def _start(self) -> None:
        self._runner.start()  # raises ShellsupError when shellsup cannot be executed
        with _registry_lock:
            _live[id(self)] = self
        self._thread.start()
        end = time.monotonic() + START_WAIT
        while self._core.session.start is None and not self._finished.is_set():
            if time.monotonic() > end:
                self._cancel()
                self._finished.wait(self._cleanup_bound())
                raise ShellsupError(f"protocol: shellsup sent no start frame within {START_WAIT:g} s; the job "
                                    "was cancelled", "protocol")
            self._finished.wait(0.005)
        if self._core.session.start is None:
            self.wait()  # raises: shellsup refused (its error frame) or died before starting
            raise ShellsupError("protocol: shellsup ended the job without a start frame", "protocol")
        spill = self._core.session.start.get("spill")
        if not isinstance(spill, str) or not spill:
            self._cancel()
            raise ShellsupError(f"protocol: start frame names no spill directory (got {quote(spill)}); is shellsup "
                                "older than --spill?", "protocol")
        self.spill = spill
        self._readers = {s: _Reader(os.path.join(spill, s)) for s in STREAMS}

    def _drive(self) -> None:
        try:
            self._result = self._runner.wait()
        except BaseException as exc:  # the outcome: CleanupError, protocol, an error frame
            self._exc = exc
        finally:
            self._finished.set()
            with _registry_lock:
                _live.pop(id(self), None)
            for loop, fut in self._waiters:
                try:
                    loop.call_soon_threadsafe(_settle, fut)
                except RuntimeError:
                    pass  # that loop is closed
            self._waiters.clear()

    # -- state --------------------------------------------------------------------

    @property
    def _core(self) -> Any:
        return self._runner._core

    @property
    def pid(self) -> int:
        """shellsup's pid."""
        proc = self._runner._proc
        assert proc is not None
        return proc.proc.pid

    @property
    def running(self) -> bool:
        """True until shellsup has reported the end of the job (or been given up on)."""
        return not self._finished.is_set() and not self._core.session.done

    @property
    def command(self) -> str:
        return self._request.command

    @property
    def bash_pid(self) -> Optional[int]:
        start = self._core.session.start
        return start.get("childPid") if start else None

    def __repr__(self) -> str:
        state = "running" if self.running else "ended"
        return f"<shellsup.Job {self.name!r} pid={self.pid} {state}>"

    def __enter__(self) -> "Job":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if not self._finished.is_set():
                try:
                    self.kill()
                except ShellsupError:
                    if exc[0] is None:
                        raise
        finally:
            self.close()

    # -- output -------------------------------------------------------------------

    def read(self, limit: int = READ_LIMIT) -> Output:
        """The output written since the last read(), at most limit bytes of both streams together.

        Every byte of each stream is returned exactly once, in order (read
        from the spill files); stdout and stderr are decoded separately, so
        their interleaving is not kept. ``more`` says bytes were left for
        the next read, ``cut`` that a spill file reached its limit.
        """
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 2:
            raise invalid(f"limit must be a whole number of bytes, at least 2 (got {quote(limit)})")
        with self._read_lock:
            ended = self._finished.is_set()  # before the sizes: then they are final
            ends = {s: self._end(s, ended) for s in STREAMS}
            avail = {s: max(0, ends[s] - self._readers[s].offset) for s in STREAMS}
            take = {s: min(avail[s], limit // 2) for s in STREAMS}
            spare = limit - sum(take.values())
            for s in STREAMS:
                extra = min(avail[s] - take[s], spare)
                take[s] += extra
                spare -= extra
            texts = {}
            for s in STREAMS:
                r = self._readers[s]
                last = ended and take[s] == avail[s] and not r.flushed
                texts[s] = r.take(take[s], last)
            more = any(avail[s] > take[s] for s in STREAMS)
            return Output(texts["stdout"], texts["stderr"], more, self._cut(ends), ended and not more)

    def output(self, tail: int = 50) -> Output:
        """The last tail lines of each stream (looking back at most 1 MiB of each); read()'s place is kept."""
        if not isinstance(tail, int) or isinstance(tail, bool) or tail < 0:
            raise invalid(f"tail must be a whole number of lines, at least 0 (got {quote(tail)})")
        ended = self._finished.is_set()
        texts = [_tail_lines(os.path.join(self.spill, s), tail) for s in STREAMS]
        return Output(texts[0], texts[1], False, self._cut({s: self._end(s, ended) for s in STREAMS}), ended)

    def _end(self, stream: str, ended: bool) -> int:
        """How many bytes of the stream's spill file can be read now."""
        size = self._readers[stream].size()
        spill = self._spill_totals() if ended else None
        if spill is not None and isinstance(spill.get(stream + "Written"), int):
            return min(size, spill[stream + "Written"])
        return size

    def _spill_totals(self) -> Optional[Dict[str, Any]]:
        totals = self._core.session.totals
        spill = totals.get("spill") if totals else None
        return spill if isinstance(spill, dict) else None

    def _cut(self, ends: Mapping[str, int]) -> bool:
        spill = self._spill_totals()
        if spill is not None:
            return bool(spill.get("cut"))
        limit = self._request.spill_max
        limit = 256 << 20 if limit is None else limit
        return any(n >= limit for n in ends.values())

    # -- ports ------------------------------------------------------------------------

    def ports(self, timeout: float = PORTS_WAIT) -> List[Dict[str, Any]]:
        """The TCP and UDP ports the job's processes listen on, asked of shellsup (a ports query).

        Each is ``{"proto", "addr", "port", "pid"}``. An ended job listens on none.
        """
        self._usable()
        session = self._core.session
        with self._runner._lock:
            seen = session.ports_answers
            if not self._send(_frames.PORTS):
                return []
        end = time.monotonic() + timeout
        while session.ports_answers <= seen:
            if self._finished.is_set() or session.done:
                return []
            if time.monotonic() > end:
                raise JobTimeoutError(f"shellsup did not answer a ports query for job {self.name!r} within {timeout:g} s")
            self._finished.wait(0.005)
        return list(session.ports)

    def _send(self, frame: bytes) -> bool:
        """Write a control frame to shellsup (the runner's lock held); False when the channel is closed."""
        proc = self._runner._proc
        stdin = proc.proc.stdin if proc is not None else None
        if stdin is None or stdin.closed or self._core.session.done or self._forked:
            return False
        try:
            os.write(stdin.fileno(), frame)  # a few bytes into a pipe shellsup drains: never blocks
        except OSError:
            return False
        return True

    # -- waiting -----------------------------------------------------------------------

    def wait_for(self, pattern: Any = None, port: Any = None, url: Any = None, timeout: Any = 30) -> Optional["re.Match[str]"]:
        """Wait until the job is ready: every condition given holds.

        pattern: a regular expression (str, compiled with re.MULTILINE, or a
            compiled str pattern) found in stdout or stderr, anywhere since
            the job began; the match is returned.
        port: a TCP port that accepts connections AND belongs to this job
            (shellsup confirms a process of the job listens on it, so a
            stranger already on the port does not count).
        url: an http(s) URL answering with a 2xx or 3xx status.
        timeout: seconds (default 30); None waits for as long as the job lives.

        Raises JobError at once if the job ends first (its exit code and last
        output in the message, the result on ``.result``), JobTimeoutError
        when the time runs out (the job is left running).
        """
        self._usable()
        probe = _Probe(self, pattern, port, url, timeout)
        try:
            while not probe.step():
                self._finished.wait(probe.pause())  # an end of the job wakes it at once
            return probe.match
        finally:
            probe.close()

    async def wait_for_async(self, pattern: Any = None, port: Any = None, url: Any = None,
                             timeout: Any = 30) -> Optional["re.Match[str]"]:
        """wait_for() for asyncio: each bounded check runs in the default executor."""
        self._usable()
        probe = _Probe(self, pattern, port, url, timeout)
        loop = asyncio.get_running_loop()
        try:
            while not await loop.run_in_executor(None, probe.step):
                await asyncio.sleep(probe.pause())
            return probe.match
        finally:
            probe.close()

    def wait(self, timeout: Any = None) -> SkillResult:
        """Wait for the job to end and return its result (the 13 keys, cleanup on ``.cleanup``).

        Raises JobTimeoutError if timeout seconds pass first (the job keeps
        running), and what run() would raise for a run that ended badly
        (CleanupError, a protocol ShellsupError).
        """
        timeout = check_wait_timeout(timeout)
        self._usable()
        if not self._finished.wait(timeout):
            raise JobTimeoutError(f"job {self.name!r} is still running after {timeout:g} s; it was left running")
        return self._outcome()

    async def wait_async(self, timeout: Any = None) -> SkillResult:
        """wait() for asyncio; cancelling the awaiting task leaves the job running."""
        timeout = check_wait_timeout(timeout)
        self._usable()
        if not self._finished.is_set():
            loop = asyncio.get_running_loop()
            fut = loop.create_future()
            self._waiters.append((loop, fut))
            if self._finished.is_set():  # ended while registering
                _settle(fut)
            try:
                await asyncio.wait_for(asyncio.shield(fut), timeout)
            except asyncio.TimeoutError:
                raise JobTimeoutError(f"job {self.name!r} is still running after {timeout:g} s; it was left running") from None
        return self._outcome()

    def kill(self, grace: Any = None) -> SkillResult:
        """Cancel the job, wait for its cleanup, and return its result.

        grace: seconds between SIGTERM and SIGKILL for the job's processes;
        None means the job's own (start()'s grace). It can shorten the job's
        grace, not lengthen it: once it has passed, shellsup is told to kill
        at once. If shellsup stops reporting, the binding escalates (SIGCONT,
        SIGTERM, SIGKILL) as run() does.
        """
        grace = check_grace(grace)
        self._usable()
        self._cancel()
        hurry_at = time.monotonic() + grace if grace is not None and grace < self._request.grace_seconds else None
        while not self._finished.wait(0.01):
            if hurry_at is not None and time.monotonic() >= hurry_at and self._core.session.announced:
                self._hurry()
                hurry_at = None
        return self._outcome()

    async def kill_async(self, grace: Any = None) -> SkillResult:
        """kill() for asyncio."""
        grace = check_grace(grace)
        self._usable()
        self._cancel()
        hurry_at = time.monotonic() + grace if grace is not None and grace < self._request.grace_seconds else None
        while not self._finished.is_set():
            if hurry_at is not None and time.monotonic() >= hurry_at and self._core.session.announced:
                self._hurry()
                hurry_at = None
            await asyncio.sleep(0.01)
        return self._outcome()

    def close(self) -> None:
        """Release the job's files; remove its spill directory if the binding made it. Kill it first."""
        if self.running and not self._forked:
            raise invalid(f"job {self.name!r} is still running: kill() or wait() before close()")
        with self._read_lock:
            for r in self._readers.values():
                r.close()
        if self._owned_dir is not None and not self._closed:
            shutil.rmtree(self._owned_dir, ignore_errors=True)
        self._closed = True
        with _registry_lock:
            _owned.pop(id(self), None)

    # -- helpers -------------------------------------------------------------------------

    def _usable(self) -> None:
        if self._forked:
            raise ShellsupError(f"job {self.name!r} belongs to the process that started it, not to this forked child",
                                "validation")

    def _cancel(self) -> None:
        if not self._forked:
            self._runner.cancel()

    def _hurry(self) -> None:
        """A signal during the cleanup's grace: shellsup kills the rest at once."""
        with self._runner._lock:
            proc = self._runner._proc
            if proc is not None and not self._core.session.done:
                proc.signal(signal.SIGTERM)

    def _cleanup_bound(self) -> float:
        return self._request.grace_seconds + _limits.WATCHDOG_MARGIN * 2 + _limits.EXIT_WAIT * 2

    def _outcome(self) -> SkillResult:
        if self._exc is not None:
            raise self._exc
        assert self._result is not None
        return self._result

    def _ended_error(self, waiting_for: str) -> JobError:
        """The error for a job that ended while something was awaited."""
        try:
            result = self._outcome()
        except ShellsupError as exc:
            err = JobError(f"job {self.name!r} ended before {waiting_for}: {exc}", result=getattr(exc, "result", None))
            err.__cause__ = exc
            return err
        last = self.output(tail=20)
        shown = ""
        if last.stdout:
            shown += f"; its stdout ended with:\n{last.stdout[-4000:]}"
        if last.stderr:
            shown += f"\n; its stderr ended with:\n{last.stderr[-4000:]}"
        how = f"exit code {result['exitCode']}"
        if result.get("signal"):
            how += f", signal {result['signal']}"
        if result.get("timedOut"):
            how += ", its lifetime ran out"
        return JobError(f"job {self.name!r} ended ({how}) before {waiting_for}{shown}", result=result)


def _settle(fut: "asyncio.Future") -> None:
    if not fut.done():
        fut.set_result(None)


class _Probe:
    """The conditions of one wait_for(), checked one bounded step at a time."""

    def __init__(self, job: Job, pattern: Any, port: Any, url: Any, timeout: Any) -> None:
        self.job = job
        self.pattern = check_pattern(pattern)
        self.port = check_port(port)
        self.url = check_url(url)
        self.timeout = check_wait_timeout(timeout)
        if self.pattern is None and self.port is None and self.url is None:
            raise invalid("wait_for needs a pattern, a port or a url to wait for (got none)")
        self.start = time.monotonic()
        self.deadline = math.inf if self.timeout is None else self.start + self.timeout
        self.match: Optional["re.Match[str]"] = None
        self.ok = {"pattern": self.pattern is None, "port": self.port is None, "url": self.url is None}
        self.why = {"port": "", "url": ""}  # the last reason a check failed, for the timeout message
        self._scan = {s: _Reader(os.path.join(job.spill, s)) for s in STREAMS}
        self._carry = {s: "" for s in STREAMS}
        self._tries = 0

    def step(self) -> bool:
        """Check each pending condition once; True when all hold. Raises when the job ended or time ran out."""
        ended = self.job._finished.is_set()
        if not self.ok["pattern"]:
            self._scan_output(ended)
        if not ended:
            if not self.ok["port"]:
                self._check_port()
            if not self.ok["url"]:
                self._check_url()
        if all(self.ok.values()):
            return True
        if ended:
            raise self.job._ended_error(self._what())
        if time.monotonic() >= self.deadline:
            why = "; ".join(f"{k}: {v}" for k, v in self.why.items() if v and not self.ok[k])
            raise JobTimeoutError(f"job {self.job.name!r} is still running, but {self._what()} did not happen within "
                                  f"{self.timeout:g} s{'; ' + why if why else ''}; it was left running")
        return False

    def pause(self) -> float:
        self._tries += 1
        return max(0.0, min(0.01 * self._tries, 0.2, self.deadline - time.monotonic()))

    def _bound(self, most: float) -> float:
        """A check's own time limit: most, cut to what is left of the wait (at least 50 ms)."""
        return max(0.05, min(most, self.deadline - time.monotonic()))

    def _what(self) -> str:
        parts = []
        if self.pattern is not None:
            parts.append(f"output matching {quote(self.pattern.pattern)}")
        if self.port is not None:
            parts.append(f"port {self.port} accepting connections")
        if self.url is not None:
            parts.append(f"{self.url} answering 2xx/3xx")
        return " and ".join(parts)

    def _scan_output(self, ended: bool) -> None:
        """Search the output read since the last step (the whole output once the job ended)."""
        assert self.pattern is not None
        while True:
            progressed = False
            for s in STREAMS:
                r = self._scan[s]
                end = self.job._end(s, ended)
                n = min(SCAN_STEP, end - r.offset)
                last = ended and n == end - r.offset and not r.flushed
                if n <= 0 and not last:
                    continue
                text = self._carry[s] + r.take(n, last)
                found = self.pattern.search(text)
                if found is not None:
                    self.match = found
                    self.ok["pattern"] = True
                    return
                self._carry[s] = text[-SCAN_CARRY:]
                progressed = progressed or n > 0
            if not (ended and progressed):
                return

    def _check_port(self) -> None:
        assert self.port is not None
        try:
            mine = [p for p in self.job.ports(timeout=self._bound(PORTS_WAIT))
                    if p.get("port") == self.port and p.get("proto") in ("tcp", "tcp6")]
        except JobTimeoutError as exc:
            self.why["port"] = str(exc)
            return
        if not mine:
            self.why["port"] = "no process of the job listens on it" + self._stranger()
            return
        for entry in mine:
            host = str(entry.get("addr") or "127.0.0.1")
            host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
            try:
                with socket.create_connection((host, self.port), timeout=self._bound(PROBE_TIMEOUT)):
                    self.ok["port"] = True
                    return
            except OSError as exc:
                self.why["port"] = f"the job listens on {host} but a connection failed: {exc}"

    def _stranger(self) -> str:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return " (something else on this machine accepts connections there)"
        except OSError:
            return ""

    def _check_url(self) -> None:
        assert self.url is not None
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(self.url, timeout=self._bound(PROBE_TIMEOUT)) as resp:
                status = resp.status
        except urllib.error.HTTPError as exc:
            status = exc.code
            exc.close()
        except (OSError, ValueError) as exc:
            self.why["url"] = f"no answer: {exc}"
            return
        if 200 <= status < 400:
            self.ok["url"] = True
        else:
            self.why["url"] = f"it answered {status}"

    def close(self) -> None:
        for r in self._scan.values():
            r.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A 3xx is an answer: do not follow it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# -- start ------------------------------------------------------------------------------------


def start(
    command: str,
    cwd: Optional[str] = None,
    *,
    name: Optional[str] = None,
    lifetime: Optional[Union[int, float]] = DEFAULT_LIFETIME,
    env: Optional[Mapping[str, str]] = None,
    grace: Optional[Union[int, float]] = None,
    spill: Optional[str] = None,
    spill_max: Optional[Union[int, str]] = None,
    budget: Optional[int] = None,
    max_procs: Optional[int] = None,
    max_memory: Optional[Union[int, str]] = None,
    pidns: bool = False,
    **options: Any,
) -> Job:
    """Start ``/bin/bash -lc command`` as a background job under shellsup and return its Job.

    Returns once shellsup has started the command. lifetime: seconds the job
    may live (greater than 0, at most 604800, 7 days; default 3600); when it
    runs out the job is stopped like a timed-out run. spill: a directory
    (existing, not a symbolic link, writable only by its owner) in which
    shellsup keeps the job's whole raw output; None makes a private
    temporary one (mode 0700), removed by close() or at exit. spill_max:
    bytes kept per stream (default 256 MiB; "64M"-style strings). The other
    arguments, and options (run()'s shell and output keywords, such as
    no_login or redact, where this version of run() has them), are run()'s.
    Bad arguments raise ShellsupError (category "validation") quoting the
    value, with nothing spawned.
    """
    base = _base_request(command, cwd, budget, grace, env, max_procs, max_memory, pidns, options)
    life = check_lifetime(lifetime)
    spill_dir = check_spill_dir(spill)
    limit = check_spill_max(spill_max)
    label = check_name(name, base.command)
    binary = find_binary()
    owned = None
    if spill_dir is None:
        owned = spill_dir = tempfile.mkdtemp(prefix="shellsup-job-")  # mode 0700
    values = {f.name: getattr(base, f.name) for f in fields(Request)}
    values["timeout"] = life
    req = JobRequest(**values, lifetime=life, spill_dir=spill_dir, spill_max=limit)
    job = Job(req, binary, label, owned)
    if owned is not None:
        with _registry_lock:
            _owned[id(job)] = job
    try:
        job._start()
    except BaseException:
        if owned is not None and (job._finished.is_set() or job._runner._proc is None):
            shutil.rmtree(owned, ignore_errors=True)  # nothing runs that could still write there
            with _registry_lock:
                _owned.pop(id(job), None)
        raise
    return job


def _base_request(command: Any, cwd: Any, budget: Any, grace: Any, env: Any, max_procs: Any, max_memory: Any,
                  pidns: Any, options: Dict[str, Any]) -> Request:
    """run()'s checks; the timeout is a placeholder, replaced by the lifetime."""
    if "timeout" in options:
        raise invalid(f"a job has a lifetime, not a timeout: use lifetime= (got timeout={quote(options['timeout'])})")
    if not options:
        return request(command, cwd, 1, budget, grace, env, max_procs, max_memory, pidns)
    try:
        return request(command, cwd, 1, budget, grace, env, max_procs, max_memory, pidns, **options)
    except TypeError as exc:  # this version's run() has no such keyword
        raise invalid(f"start() does not take {', '.join(sorted(options))}: {exc}") from None


async def start_async(command: str, cwd: Optional[str] = None, **kwargs: Any) -> Job:
    """start() for asyncio: the short wait for shellsup's start frame runs in the default executor."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: start(command, cwd, **kwargs))


__all__ = ["Job", "JobError", "JobTimeoutError", "Output", "jobs", "start", "start_async"]
