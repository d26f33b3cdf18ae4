"""Background jobs: a shellsup run that the caller does not wait for.

A job is shellsup in frames mode with ``--lifetime`` instead of a call
timeout and ``--spill`` always on, driven by the same core as run()
(``_core.Core`` through ``_run.Run``) in a reader thread of its own. The
thread consumes every frame (progress, ports answers, totals) into the
job's state; the caller reads the output from the spill files
(``_spillread``), so every byte is seen exactly once and in order, however
far past the budget. wait_for()'s conditions are in ``_probe``.

Every job dies with its owner: atexit cancels the live jobs and waits for
their cleanup; if the process dies without running atexit (SIGKILL,
os._exit), each job's shellsup sees its control channel reach EOF and cleans
up by itself ("parent-gone"). A forked child closes its copies of the
control channels, so a fork never keeps a job alive.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _frames, _interactive, _limits
from ._interactive import check_interactive
from ._errors import JobError, JobTimeoutError, ShellsupError
from ._pin import pinned_binary
from ._jobargs import JobRequest, check_name, check_wait_timeout
from ._limits import DEFAULT_BUDGET, DEFAULT_LIFETIME, DEFAULT_SPILL_MAX
from ._probe import PORTS_WAIT, Probe
from ._result import SkillResult
from ._run import Run
from ._spillread import SpillReader, tail_lines
from ._validate import LIFETIME, PathLike, Request, check_grace, check_spill_dir, check_spill_max, invalid, quote, request

READ_LIMIT = 64 * 1024  # bytes of both streams one read() returns at most
START_WAIT = 60.0  # seconds start() waits for shellsup's start frame
STREAMS = ("stdout", "stderr")


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
    """A forked child must not hold the jobs' control channels: the owner's death would not reach them."""
    global _registry_lock
    _registry_lock = threading.Lock()  # the parent's may have been held by another thread
    for job in list(_live.values()):
        job._forked = True
        proc = job._runner._proc
        if proc is not None:
            proc.close_stdin()
    _live.clear()
    _owned.clear()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


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
        self._ports_asked = 0  # ports queries sent (under the runner's lock)
        self._result: Optional[SkillResult] = None
        self._exc: Optional[BaseException] = None
        self._read_lock = threading.Lock()
        self._readers: Dict[str, SpillReader] = {}
        self._forked = False
        self._closed = False
        self._waiters: List[Tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._input_count = 0  # write() and send_eof() calls (docs/interactive.md)
        self._input_at = 0.0  # time.monotonic() of the last
        self._input_sent = 0  # bytes of input frames sent
        self._expecter: Optional[_interactive.Expecter] = None
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
        self._readers = {s: SpillReader(os.path.join(spill, s)) for s in STREAMS}

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
        texts = [tail_lines(os.path.join(self.spill, s), tail) for s in STREAMS]
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
        limit = DEFAULT_SPILL_MAX if limit is None else limit
        return any(n >= limit for n in ends.values())

    # -- ports ------------------------------------------------------------------------

    def ports(self, timeout: float = PORTS_WAIT) -> List[Dict[str, Any]]:
        """The TCP and UDP ports the job's processes listen on, asked of shellsup (a ports query).

        Each is ``{"proto", "addr", "port", "pid"}``, one per proto/addr/port, sorted by port; only
        listeners in shellsup's network namespace (one the job made in a namespace of its own, with
        ``unshare -n``, is not reachable at the port and is not listed). At most 4096 (the lowest
        ports) when there are more. An ended job listens on none.
        """
        return self._ask_ports(_frames.PORTS, timeout)

    def _ask_ports(self, query: bytes, timeout: float) -> List[Dict[str, Any]]:
        """Send a ports query and wait up to timeout for its answer."""
        self._usable()
        session = self._core.session
        with self._runner._lock:
            if not self._send(query):
                return []
            self._ports_asked += 1
            mine = self._ports_asked  # this query's answer is the mine-th: a late one is never taken for it
        end = time.monotonic() + timeout
        while session.ports_answers < mine:
            if self._finished.is_set() or session.done:
                return []
            if time.monotonic() > end:
                raise JobTimeoutError(f"shellsup did not answer a ports query for job {self.name!r} within {timeout:g} s")
            self._finished.wait(0.005)
        return list(session.ports_by_answer.get(mine, session.ports))

    async def ports_async(self, timeout: float = PORTS_WAIT) -> List[Dict[str, Any]]:
        """ports() for asyncio: the bounded query runs in the default executor."""
        return await asyncio.get_running_loop().run_in_executor(None, self.ports, timeout)

    def _send(self, frame: bytes) -> bool:
        """Write a control frame to shellsup (the runner's lock held); False when the channel is closed."""
        proc = self._runner._proc
        if proc is None or self._core.session.done or self._forked:
            return False
        return proc.send(frame)

    # -- waiting -----------------------------------------------------------------------

    def wait_for(self, pattern: Any = None, port: Any = None, url: Any = None, timeout: Any = 30,
                 idle: Any = None) -> Optional["re.Match[str]"]:
        """Wait until the job is ready: every condition given holds.

        pattern: a regular expression (str, compiled with re.MULTILINE, or a
            compiled str pattern) found in stdout or stderr, anywhere since
            the job began; the match is returned.
        port: a TCP port that accepts connections AND belongs to this job
            (shellsup confirms a process of the job listens on it, so a
            stranger already on the port does not count, nor a listener the job made in a network
            namespace of its own, which a connection here does not reach).
        url: an http(s) URL answering with a 2xx or 3xx status.
        idle: seconds: the job's output (and input) has been quiet that long,
            checked after the other conditions (docs/interactive.md).
        timeout: seconds (default 30); None waits for as long as the job lives.

        Raises JobError at once if the job ends first (its exit code and last
        output in the message, the result on ``.result``), JobTimeoutError
        when the time runs out (the job is left running).
        """
        self._usable()
        if idle is not None:
            begun = time.monotonic()
            limit = check_wait_timeout(timeout)
            match = None
            if pattern is not None or port is not None or url is not None:
                match = self.wait_for(pattern, port, url, timeout)
            left = None if limit is None else max(0.0, limit - (time.monotonic() - begun))
            _interactive.wait_idle(self, idle, left)
            return match
        probe = Probe(self, pattern, port, url, timeout)
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
        probe = Probe(self, pattern, port, url, timeout)
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
        hurry = self._begin_kill(grace)
        while not self._finished.wait(0.01):
            hurry.check()
        return self._outcome()

    async def kill_async(self, grace: Any = None) -> SkillResult:
        """kill() for asyncio."""
        hurry = self._begin_kill(grace)
        while not self._finished.is_set():
            hurry.check()
            await asyncio.sleep(0.01)
        return self._outcome()

    def close(self) -> None:
        """Release the job's files; remove its spill directory if the binding made it. Kill it first."""
        if self.running and not self._forked:
            raise invalid(f"job {self.name!r} is still running: kill() or wait() before close()")
        with self._read_lock:
            for r in self._readers.values():
                r.close()
            if self._expecter is not None:
                self._expecter.close()
        if self._owned_dir is not None and not self._closed:
            shutil.rmtree(self._owned_dir, ignore_errors=True)
        self._closed = True
        with _registry_lock:
            _owned.pop(id(self), None)

    # -- input (docs/interactive.md) ---------------------------------------------------------

    def write(self, data: Union[str, bytes]) -> None:
        """Send text (UTF-8) or bytes to the job's terminal (pty=True) or stdin (stdin=True).

        Returns once shellsup has taken all of it; a program that does not
        read holds the write (at most 1 MiB is in flight).
        After the job ended the input is dropped.
        """
        self._usable()
        _interactive.write(self, data)

    def send_eof(self) -> None:
        """End the input: stdin=True closes the pipe; on a terminal the EOF character (^D) is written,
        which ends the input of a program reading at the start of a line."""
        self._usable()
        _interactive.send_eof(self)

    def signal(self, name: str) -> None:
        """Send INT, QUIT, TSTP, HUP, TERM or CONT to the terminal's foreground process group (what Ctrl-C
        does), or without a terminal to bash's process group."""
        self._usable()
        _interactive.signal(self, name)

    def resize(self, cols: int, rows: int) -> None:
        """Set the terminal's size; the program gets SIGWINCH."""
        self._usable()
        _interactive.resize(self, cols, rows)

    def expect(self, pattern: Any, timeout: Any = 30) -> "re.Match[str]":
        """Wait for pattern (str, compiled with re.MULTILINE, or a compiled pattern) in the output since the last
        expect() (stdout; with stdin=True stderr too; at most its last 1 MiB) and return the match; the next
        expect() searches after it.

        Raises JobError at once if the job ends without a match, JobTimeoutError when timeout seconds pass (the
        job is left running).
        """
        self._usable()
        if self._expecter is None:
            self._expecter = _interactive.Expecter(self)
        return self._expecter.expect(self, pattern, timeout)

    @property
    def waiting(self) -> bool:
        """A pty job's program waits for input: shellsup saw it blocked reading the terminal after 0.5 s without
        output, and nothing was printed or written since."""
        return _interactive.waiting(self)

    @property
    def prompt(self) -> Optional[str]:
        """While ``waiting``: the last line the program printed (its prompt); else None."""
        return _interactive.prompt(self)

    # -- helpers -------------------------------------------------------------------------

    def _usable(self) -> None:
        if self._forked:
            raise ShellsupError(f"job {self.name!r} belongs to the process that started it, not to this forked child",
                                "validation")

    def _cancel(self) -> None:
        if not self._forked:
            self._runner.cancel()

    def _begin_kill(self, grace: Any) -> "_Hurry":
        """Check kill()'s grace, send the cancel, and return what shortens the grace."""
        grace = check_grace(grace)
        self._usable()
        self._cancel()
        shorter = grace is not None and grace < self._request.grace_seconds
        return _Hurry(self, time.monotonic() + grace if shorter else None)

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


class _Hurry:
    """kill(grace=S): S seconds after the cleanup began, tell shellsup to skip the rest of the grace."""

    def __init__(self, job: Job, at: Optional[float]) -> None:
        self.job = job
        self.at = at  # monotonic; None: the job's own grace stands

    def check(self) -> None:
        # Only once shellsup announced the cancel: a SIGTERM before it would
        # itself be the cancel, and the full grace would follow.
        if self.at is not None and time.monotonic() >= self.at and self.job._core.session.announced:
            self.job._hurry()
            self.at = None


def _settle(fut: "asyncio.Future") -> None:
    if not fut.done():
        fut.set_result(None)


# -- start ------------------------------------------------------------------------------------


def start(
    command: str,
    cwd: Optional[str] = None,
    *,
    name: Optional[str] = None,
    lifetime: Optional[Union[int, float]] = DEFAULT_LIFETIME,
    env: Optional[Mapping[str, str]] = None,
    grace: Optional[Union[int, float]] = None,
    spill: Optional[PathLike] = None,
    spill_max: Optional[Union[int, str]] = None,
    budget: Optional[int] = DEFAULT_BUDGET,
    max_procs: Optional[int] = None,
    max_memory: Optional[Union[int, str]] = None,
    pidns: Optional[bool] = None,
    user: Optional[str] = None,
    no_login: bool = False,
    scrub_env: bool = False,
    agent_env: bool = False,
    env_allow: Optional[Sequence[str]] = None,
    workspace: Optional[PathLike] = None,
    redact: bool = False,
    redact_patterns: Optional[Sequence[str]] = None,
    capture: Optional[str] = None,
    agent: bool = False,
    sandbox: Optional[str] = None,
    protect: Optional[Sequence[PathLike]] = None,
    network: bool = True,
    tidy: bool = False,
    pty: bool = False,
    pty_size: Optional[Tuple[int, int]] = None,
    stdin: bool = False,
    idle_timeout: Optional[Union[int, float]] = None,
    **extra: Any,
) -> Job:
    """Start ``/bin/bash -lc command`` as a background job under shellsup and return its Job.

    Returns once shellsup has started the command. lifetime: seconds the job
    may live (greater than 0, at most 604800, 7 days; default 3600); when it
    runs out the job is stopped like a timed-out run. spill: a directory
    (existing, not a symbolic link, writable only by its owner) in which
    shellsup keeps the job's whole raw output; None makes a private
    temporary one (mode 0700), removed by close() or at exit. spill_max:
    bytes kept per stream, as run()'s (an int from 0, or a "64M"-style
    string; default 256 MiB). The other
    arguments are run()'s (a job has no timeout: timeout= is refused).
    pty=True runs the command on a terminal of pty_size (cols, rows; default
    (80, 24)); stdin=True gives it a pipe as stdin; either lets write(),
    send_eof(), signal() and expect() drive it. idle_timeout: seconds
    without output that end the job (status "idle") (docs/interactive.md).
    Bad arguments raise ShellsupError (category "validation") quoting the
    value, with nothing spawned.
    """
    _refuse_extra(extra)
    base = request(command, cwd, lifetime, budget, grace, env, max_procs, max_memory, pidns, user=user, kind=LIFETIME,
                   no_login=no_login, scrub_env=scrub_env, agent_env=agent_env, env_allow=env_allow, workspace=workspace,
                   redact=redact, redact_patterns=redact_patterns, capture=capture, agent=agent, tidy=tidy,
                   sandbox=sandbox, protect=protect, network=network)
    spill_dir = check_spill_dir(spill)
    limit = check_spill_max(spill_max, spill_dir, needs_spill=False)
    label = check_name(name, base.command)
    binary = pinned_binary()
    owned = None
    if spill_dir is None:
        owned = spill_dir = tempfile.mkdtemp(prefix="shellsup-job-")  # mode 0700
    values = {f.name: getattr(base, f.name) for f in fields(Request)}
    values["interactive"] = check_interactive(pty, pty_size, stdin, idle_timeout)
    req = JobRequest(**values, spill_dir=spill_dir, spill_max=limit)
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


def _refuse_extra(extra: Dict[str, Any]) -> None:
    """A timeout is the one keyword people reach for: say what a job has instead."""
    if "timeout" in extra:
        raise invalid(f"a job has a lifetime, not a timeout: use lifetime= (got timeout={quote(extra['timeout'])})")
    if extra:
        raise TypeError(f"start() got an unexpected keyword argument {sorted(extra)[0]!r}")


async def start_async(command: str, cwd: Optional[str] = None, **kwargs: Any) -> Job:
    """start() for asyncio: the short wait for shellsup's start frame runs in the default executor."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: start(command, cwd, **kwargs))


__all__ = ["Job", "JobError", "JobTimeoutError", "Output", "jobs", "start", "start_async"]
