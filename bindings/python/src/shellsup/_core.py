"""The rules of one run, free of I/O, shared by every driver.

A driver (``_run.Run`` for run() and for a background job, which runs one
on a thread of its own; ``_async.AsyncRun`` for run_async()) owns the I/O. It spawns shellsup with
``Core.argv``, feeds the core what it reads, tells it what happened and when
(monotonic seconds), and carries out the actions the core queues (``take``).
The core owns every decision:

- the deadlines: timeout + grace + WATCHDOG_MARGIN for the run; grace +
  WATCHDOG_MARGIN for the cleanup after a cancel or a SIGTERM; EXIT_WAIT for
  shellsup to exit after its last frame or after SIGKILL;
- cancel once: only the first cancel writes the cancel frame, and a cancel
  before the spawn is sent as soon as shellsup exists;
- the first exception wins: a KeyboardInterrupt, a CancelledError, a
  progress callback's error or a protocol error is remembered, delivery
  stops, shellsup is made to clean up, and the exception is raised only
  after shellsup has reported or been given up on;
- what to do when shellsup stops reporting: SIGCONT (it may be stopped),
  a cancel and SIGTERM (it cancels and cleans up), then SIGKILL, then stop
  waiting; and the error that names what happened and what is known to be
  left;
- the frames: the run's frames in order, and a protocol error for anything
  after totals or a second start;
- whether the report counts: totals (or an error frame) count only when
  shellsup then exited with the status they promise (``expected_exit``). A
  shellsup killed by a signal after its totals, or exiting otherwise, left
  a report that may have been forged or that it did not stand behind: the
  run is unreported, a protocol error, and its leaf is killed or swept as
  for a shellsup that died without totals.
"""

from __future__ import annotations

import math
import signal
from typing import Any, Callable, Collection, List, Mapping, Optional, Tuple

from . import _dumpable, _frames, _leaf, _limits
from ._errors import EXEC_FAILED, PROTOCOL, CleanupError, ShellsupError
from ._result import SkillResult
from ._transcript import Transcript, add_note
from ._validate import Request

# Actions a driver carries out, in the order queued.
WRITE_CANCEL = "write_cancel"  # write the cancel frame to shellsup's stdin
CLOSE_STDIN = "close_stdin"  # EOF on the control channel: shellsup cancels ("parent-gone")
SIGCONT = "SIGCONT"
SIGTERM = "SIGTERM"
SIGKILL = "SIGKILL"
STOP_READING = "stop_reading"  # give up: treat shellsup's pipes as closed
SIGNALS = {SIGCONT: signal.SIGCONT, SIGTERM: signal.SIGTERM, SIGKILL: signal.SIGKILL}

# Phases of a run, in order; a run only moves forward.
NEW = "new"  # not spawned yet
RUNNING = "running"  # spawned, no cancel sent
CANCELLING = "cancelling"  # cancel sent (or control closed): waiting for totals
TERMINATING = "terminating"  # SIGTERM sent: waiting for totals
REPORTED = "reported"  # totals or error arrived, or stdout closed: waiting for shellsup to exit
KILLED = "killed"  # SIGKILL sent: waiting for shellsup to exit
GAVE_UP = "gave_up"  # stopped waiting

Chunk = Tuple[str, str]


def _secs(x: float) -> str:
    return f"{x:g}"


class Core:
    """What one run has seen and decided; the driver does the rest."""

    def __init__(self, request: Request, binary: str) -> None:
        self.request = request
        self.binary = binary
        self.session = Transcript()  # the frames so far
        self.phase = NEW
        self.deadline = math.inf  # monotonic; what its passing means depends on the phase
        self.pending: Optional[BaseException] = None  # the first exception; raised at the end
        self.returncode: Optional[int] = None  # shellsup's exit status once reaped
        self._frames = _frames.Buffer()
        self._stderr = bytearray()
        self._todo: List[str] = []
        self._parsing = True  # False once shellsup's frames stopped making sense
        self._delivering = True  # False after an exception: no more progress
        self._cancel_sent = False
        self._cancel_wanted = False  # cancel() came before the spawn
        self._stdin_closed = False
        self._stdout_eof = False
        self._overran: Optional[str] = None  # how shellsup stopped reporting, when it did
        self._sent: List[str] = []  # signals the binding sent shellsup, in order
        # kills the cgroup leaf of a shellsup that died without totals (_leaf.kill;
        # a test may replace it); its answer goes into the error message
        self.kill_leaf: Callable[[str], str] = lambda leaf: _leaf.kill(leaf, self.binary, self.request.env)
        # runs shellsup sweep for a shellsup that died before its start frame
        # named a leaf (_leaf.sweep; a test may replace it)
        self.sweep_leaves: Callable[[], str] = lambda: _leaf.sweep(self.binary, self.request.env)
        self._leaf_note: Optional[str] = None
        self._untrusted: Optional[str] = None  # why the report does not count, once judged
        self._judged = False

    # -- spawning -------------------------------------------------------------

    @property
    def argv(self) -> List[str]:
        """shellsup's command line in frames mode."""
        return self.request.argv(self.binary)

    def spawn_failed(self, exc: OSError) -> ShellsupError:
        """The error for a shellsup that could not be executed."""
        return ShellsupError(f"cannot execute shellsup {self.binary!r}: {exc}", EXEC_FAILED)

    def spawned(self, now: float) -> None:
        """shellsup exists: arm the run's deadline, and send a cancel that came early."""
        request = self.request
        self.phase = RUNNING
        self.deadline = now + request.deadline.seconds + request.grace_seconds + _limits.WATCHDOG_MARGIN
        if self._cancel_wanted:
            self.cancel(now)

    # -- what the driver reads ------------------------------------------------

    def stdout(self, data: bytes) -> None:
        """Bytes from shellsup's stdout (frames)."""
        if self._parsing:
            self._frames.feed(data)

    def stderr(self, data: bytes) -> None:
        """Bytes from shellsup's stderr: the tail is kept for error messages."""
        self._stderr += data
        del self._stderr[:-_limits.STDERR_KEPT]

    def next_chunk(self, now: float) -> Optional[Chunk]:
        """Take buffered frames until one is progress to deliver; None when none is left.

        Raises a protocol ShellsupError for a frame that makes no sense or
        comes out of turn; the driver passes it to fail().
        """
        while self._parsing:
            frame = self._frames.next()
            if frame is None:
                if self._stdout_eof and self._frames.pending():
                    raise ShellsupError("protocol: truncated frame from shellsup", PROTOCOL)
                return None
            chunk = self.session.handle(frame)
            if self.session.done and self.phase not in (REPORTED, KILLED, GAVE_UP):
                self._reported(now)
            if chunk is not None and self._delivering:
                return chunk
        return None

    def stdout_closed(self, now: float) -> None:
        """EOF on shellsup's stdout: no frame can come after what is buffered."""
        self._stdout_eof = True
        if self.phase in (RUNNING, CANCELLING, TERMINATING):
            self._reported(now)  # it cannot report now: give it EXIT_WAIT to exit, then SIGKILL

    def exited(self, returncode: int) -> None:
        """shellsup has exited and been reaped."""
        self.returncode = returncode

    # -- what happened to the run -----------------------------------------------

    def cancel(self, now: float) -> None:
        """Ask shellsup to cancel the run; only the first call counts."""
        if self.phase == NEW:
            self._cancel_wanted = True
            return
        if self._cancel_sent or self.phase not in (RUNNING, CANCELLING, TERMINATING):
            return
        self._cancel_sent = True
        if not self._stdin_closed:
            self._todo.append(WRITE_CANCEL)
        self._signal(SIGCONT)  # a stopped shellsup could not read it
        if self.phase == RUNNING:
            self.phase = CANCELLING
            self.deadline = min(self.deadline, now + self._cleanup_wait())

    def fail(self, exc: BaseException, now: Optional[float]) -> None:
        """An exception interrupted the run: remember the first, stop delivery, make shellsup clean up."""
        if self.pending is None:
            self.pending = exc
        self._delivering = False
        protocol = isinstance(exc, ShellsupError) and exc.category == PROTOCOL
        if not protocol:
            if now is not None:
                self.cancel(now)
            return
        # The frames cannot be trusted any more: stop reading them, and let EOF
        # on the control channel tell shellsup to cancel.
        self._parsing = False
        self._close_stdin()
        if self.phase == RUNNING:
            self.phase = CANCELLING
            if now is not None:
                self.deadline = min(self.deadline, now + self._cleanup_wait())

    def deadline_passed(self, now: float, stopped: bool = False) -> None:
        """The deadline passed; stopped says whether shellsup is in the stopped state."""
        if self.phase == RUNNING:
            self._overran = "did not report within " + self._run_wait_text()
        elif self.phase == CANCELLING:
            self._overran = "did not report within " + self._cleanup_wait_text() + " of being cancelled"
        if self.phase in (RUNNING, CANCELLING):
            if stopped:
                self._overran += " (it was stopped)"
            if self._cancel_sent:
                self._signal(SIGCONT)
            else:
                self.cancel(now)  # the cancel frame and SIGCONT
            self._signal(SIGTERM)  # a last chance: shellsup cancels and cleans up
            self.phase = TERMINATING
            self.deadline = now + self._cleanup_wait()
        elif self.phase in (TERMINATING, REPORTED):
            if self.phase == TERMINATING:
                self._overran = (self._overran or "did not report") + ", nor after SIGTERM"
            self._signal(SIGCONT)
            self._signal(SIGKILL)
            self.phase = KILLED
            self.deadline = now + _limits.EXIT_WAIT
        elif self.phase == KILLED:
            self._todo.append(STOP_READING)
            self.phase = GAVE_UP
            self.deadline = math.inf

    def take(self) -> List[str]:
        """The actions queued since the last call, in order."""
        todo, self._todo = self._todo, []
        return todo

    # -- the end ------------------------------------------------------------------

    def clean_leftovers(self) -> None:
        """Judge what is left of the frames and, for a shellsup gone without totals,
        kill its cgroup leaf or sweep (blocking I/O of up to a few seconds, which an
        asyncio driver runs off its loop). outcome() does it too; twice is harmless."""
        self._judge_leftovers()
        self._judge_report()
        self._kill_leftover_leaf()

    @property
    def reported(self) -> bool:
        """Whether shellsup reported and exited as its report says (then there is
        nothing left to clean). Meaningful once shellsup is gone."""
        return self.session.done and self._parsing and self._report_doubt() is None

    def outcome(self) -> SkillResult:
        """The run's result, or the exception it ends in (called once shellsup is gone)."""
        self.clean_leftovers()
        pending = self.pending
        if pending is not None:
            if isinstance(pending, ShellsupError) and pending.category == PROTOCOL:
                raise ShellsupError(f"{pending.message}; {self._ending()}", PROTOCOL) from pending
            if not self.session.done or self._overran or self._untrusted:
                add_note(pending, "shellsup: " + self._ending())
            elif self._stragglers():
                add_note(pending, "shellsup: " + self._cleanup_incomplete())
            raise pending
        if self._overran:
            raise ShellsupError(f"protocol: shellsup {self._overran}; {self._ending()}", PROTOCOL)
        if self._untrusted:
            raise ShellsupError(f"protocol: unreported: {self._untrusted}; {self._ending()}", PROTOCOL)
        if self.session.error is not None:
            raise self.session.error
        if self.session.result is not None:
            if self._stragglers():
                raise CleanupError(self._cleanup_incomplete(), self.session.result)
            return self.session.result
        raise ShellsupError(f"protocol: {self._ending()}", PROTOCOL)

    # -- helpers --------------------------------------------------------------------

    def _kill_leftover_leaf(self) -> None:
        """shellsup gone without totals in the cgroup tier: its tree may still be in
        the leaf the start frame named; kill it (the one I/O the core does, through
        the injectable ``kill_leaf``). Dead before its start frame, it named no
        leaf, and a cgroup-v1 tier's start frame names none (its leaves are v1):
        once it is reaped, ``sweep_leaves`` kills every stale one."""
        start = self.session.start
        trusted = self.session.done and self._untrusted is None and self._parsing
        if trusted or self._leaf_note is not None:
            return
        if self.session.error is not None and self._untrusted is None:
            return  # it refused to run: nothing was started
        _dumpable.keep()  # what the command started may outlive the run: see _dumpable
        if start is None:
            # its frames ended cleanly before the start frame (no garbage, no error
            # frame): it died — by a signal, a crash or the binding's own SIGKILL —
            # without cleaning up; the sweep touches only leaves of shellsups that are gone
            if self.returncode is not None and self._parsing:
                self._leaf_note = self.sweep_leaves()
            return
        leaf = start.get("cgroup")
        if isinstance(leaf, str) and leaf:
            self._leaf_note = self.kill_leaf(leaf)
        elif self.returncode is not None and "cgroup-v1" in str(start.get("containment", "")).split("+"):
            # v1 leaves (limits only), which the start frame does not name, under the
            # v1 cgroups shellsup inherited from this process: plain sweep sweeps them
            self._leaf_note = "the cgroup-v1 tier's leaves are not named in the start frame; " + self.sweep_leaves()

    def _judge_report(self) -> None:
        """Once shellsup is gone: does its report count? (see expected_exit)"""
        if not self._judged:
            self._judged = True
            self._untrusted = self._report_doubt()

    def _report_doubt(self) -> Optional[str]:
        """Why totals or an error frame do not count, or None when they do (or none came)."""
        frame = self.session.totals if self.session.result is not None else None
        if frame is None and self.session.error is None:
            return None
        expected, promise = expected_exit(frame)
        code = self.returncode
        if code is not None and code in expected:
            return None
        kind = "totals" if frame is not None else "error"
        if code is None:
            ended = "shellsup did not exit"
        elif code < 0:
            ended = f"shellsup was killed by {_signame(-code)}"
        else:
            ended = f"shellsup exited with status {code}"
        return (f"its {kind} frame promises exit status {promise}, but {ended}: the frame may be forged, "
                "or shellsup did not stand behind it, so it does not count")

    def _judge_leftovers(self) -> None:
        """Frames or bytes still buffered at the end: the drivers take every frame
        before they finish, so anything left is a frame cut short."""
        self._stdout_eof = True
        try:
            while self.next_chunk(math.inf) is not None:
                pass  # too late to deliver
        except ShellsupError as exc:
            self.fail(exc, None)

    def _reported(self, now: float) -> None:
        self.phase = REPORTED
        self._close_stdin()  # shellsup is done; it exits without waiting for EOF
        self.deadline = now + _limits.EXIT_WAIT

    def _close_stdin(self) -> None:
        if not self._stdin_closed:
            self._stdin_closed = True
            self._todo.append(CLOSE_STDIN)

    def _signal(self, name: str) -> None:
        self._todo.append(name)
        if self._sent[-1:] != [name]:
            self._sent.append(name)

    def _cleanup_wait(self) -> float:
        return self.request.grace_seconds + _limits.WATCHDOG_MARGIN

    def _run_wait_text(self) -> str:
        r = self.request
        return f"{_secs(r.deadline.seconds)} s {r.deadline.kind} + {_secs(r.grace_seconds)} s grace + {_secs(_limits.WATCHDOG_MARGIN)} s"

    def _cleanup_wait_text(self) -> str:
        return f"{_secs(self.request.grace_seconds)} s grace + {_secs(_limits.WATCHDOG_MARGIN)} s"

    def _stragglers(self) -> List[Any]:
        result = self.session.result
        found = result.cleanup.get("stragglers") if result is not None else None
        return list(found) if isinstance(found, list) else []

    def _cleanup_incomplete(self) -> str:
        result = self.session.result
        assert result is not None
        stragglers = self._stragglers()
        omitted = result.cleanup.get("stragglersOmitted") or 0
        shown = "; ".join(_straggler(s) for s in stragglers[:10])
        more = len(stragglers) - 10 + omitted if len(stragglers) > 10 else omitted
        extra = f" and {more} more" if more else ""
        return (
            f"cleanup incomplete: {len(stragglers) + omitted} process(es) survived the cleanup "
            f"of {result.get('command')!r} ({shown}{extra}); the command's exitCode was "
            f"{result.get('exitCode')}; the full result is on .result"
        )

    def _ending(self) -> str:
        """How shellsup ended, what is known to be left, and the tail of its stderr."""
        parts = [self._how(), self._left()]
        if self._sent:
            parts.insert(1, "the binding sent it " + ", ".join(self._sent))
        tail = bytes(self._stderr).decode("utf-8", "replace").strip()
        if tail:
            parts.append(f"its stderr: {tail[-1000:]!r}")
        return "; ".join(parts)

    def _how(self) -> str:
        code = self.returncode
        reported = "" if self.session.done else " without reporting a result"
        if code is None:
            return f"shellsup did not exit{reported} (the binding stopped waiting)"
        if code >= 0:
            return f"shellsup exited with status {code}{reported}"
        if -code == signal.SIGKILL and SIGKILL in self._sent:
            return f"shellsup was killed by the binding{reported}"
        return f"shellsup was killed by {_signame(-code)}{reported}"

    def _left(self) -> str:
        trusted = self._untrusted is None and self._parsing
        if self.session.result is not None and trusted:
            if self._stragglers():
                return self._cleanup_incomplete()
            return "its cleanup had finished with nothing left"
        if self.session.error is not None and trusted:
            return "it reported an error before running the command"
        start = self.session.start
        if start is not None:
            if self._leaf_note:
                return f"its cleanup was not confirmed: {self._leaf_note}"
            if "pidns" in str(start.get("containment", "")).split("+"):
                return (
                    "its cleanup was not confirmed, but the command ran in a PID namespace, "
                    "which the kernel kills when shellsup dies"
                )
            return (
                f"its cleanup was not confirmed: the command (bash pid {start.get('childPid')}) "
                "and its descendants may still be running"
            )
        note = f"; {self._leaf_note}" if self._leaf_note else ""
        return f"no start frame arrived, so no command is known to have started{note}"


def expected_exit(totals: Optional[Mapping[str, Any]]) -> Tuple[Collection[int], str]:
    """The exit statuses shellsup promises with a totals frame (None: an error
    frame), and how to say them: 125 if its cleanup left processes or bash's
    status is unknown, else 124 for a timeout, 128+N for a cancel by signal N,
    130 for any other cancel, else bash's exitCode; 125, 126 or 127 after an
    error frame."""
    if totals is None:
        return (125, 126, 127), "125, 126 or 127"
    cleanup = totals.get("cleanup")
    cleanup = cleanup if isinstance(cleanup, dict) else {}
    code = totals.get("exitCode")
    if cleanup.get("stragglers") or cleanup.get("stragglersOmitted") or not isinstance(code, int) or isinstance(code, bool):
        return (125,), "125"
    if totals.get("timedOut") is True or totals.get("idle") is True or totals.get("needsInput") is True:
        return (124,), "124"
    if totals.get("cancelled") is True:
        if totals.get("cancelReason") == "signal":
            return range(129, 193), "128+N"
        return (130,), "130"
    return (code,), str(code)


def _straggler(s: Any) -> str:
    if not isinstance(s, dict):
        return repr(s)[:80]
    return f"pid {s.get('pid')} {s.get('comm')!r} state {s.get('state')}: {s.get('reason')}"


def _signame(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"
