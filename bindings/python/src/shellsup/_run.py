"""Driving one shellsup process from the calling thread (run()).

One thread, one selector over shellsup's stdout (frames) and stderr (kept
as a short tail for error messages). Every way out of a run goes through
the same loop: whatever interrupts it — KeyboardInterrupt, a progress
callback that raises, a frame that makes no sense — first makes shellsup
cancel and clean up, and is re-raised only once shellsup has reported (or a
bounded wait has run out).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import threading
import time
from typing import Callable, Optional

from . import _frames
from ._errors import EXEC_FAILED, PROTOCOL, ShellsupError
from ._result import SkillResult
from ._session import Session
from ._validate import Request

Deliver = Callable[[str, str], object]

# Bounds on waiting for shellsup, in seconds.
SAFETY = 15.0  # beyond timeout + grace: shellsup should have reported long before
CLEANUP_SLACK = 10.0  # beyond grace, after a cancel, for the totals frame
EXIT_WAIT = 5.0  # after the last frame (or a kill), for shellsup to exit
STDERR_TAIL = 4096  # bytes of shellsup's stderr kept for error messages
READ_SIZE = 1 << 18


class _GiveUp(Exception):
    """shellsup was killed and still did not close its pipes."""


class Run:
    """One shellsup process in frames mode, driven from the calling thread.

    start() spawns it, wait() reads its frames until it exits and returns the
    result, cancel() (from any thread) asks it to cancel the run.
    """

    def __init__(self, request: Request, binary: str, deliver: Optional[Deliver]) -> None:
        self._request = request
        self._binary = binary
        self._deliver = deliver
        self._session = Session()
        self._frames = _frames.Buffer()
        self._stderr = bytearray()
        self._lock = threading.Lock()  # guards stdin: cancel() may come from another thread
        self._proc: Optional[subprocess.Popen] = None
        self._cancel_sent = False
        self._stdin_closed = False
        self._parsing = True  # False once shellsup's frames stopped making sense
        self._pending: Optional[BaseException] = None  # re-raised once shellsup is gone
        self._deadline = 0.0  # monotonic; what happens when it passes depends on the phase
        self._done_seen = False
        self._killed = False

    # -- the plan ---------------------------------------------------------

    def start(self) -> None:
        """Spawn shellsup. Nothing else is started."""
        try:
            self._proc = subprocess.Popen(
                self._request.argv(self._binary),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._request.env,
            )
        except OSError as exc:
            raise ShellsupError(f"cannot execute shellsup {self._binary!r}: {exc}", EXEC_FAILED) from exc
        request = self._request
        self._deadline = time.monotonic() + request.timeout + request.grace_seconds + SAFETY

    def wait(self) -> SkillResult:
        """Read frames until shellsup exits; return the result or raise."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None and proc.stderr is not None
        open_fds = {proc.stdout.fileno(), proc.stderr.fileno()}
        selector = selectors.DefaultSelector()
        try:
            for fd in open_fds:
                selector.register(fd, selectors.EVENT_READ)
            while open_fds:
                try:
                    self._step(selector, open_fds)
                except _GiveUp:
                    break
                except BaseException as exc:  # KeyboardInterrupt, a progress callback's error, protocol
                    self._abort(exc)
        finally:
            selector.close()
            self._reap()
        return self._outcome()

    def cancel(self) -> None:
        """Ask shellsup to cancel the run. Thread-safe; only the first call counts."""
        with self._lock:
            if self._cancel_sent or self._proc is None or self._stdin_closed:
                return
            self._cancel_sent = True
            self._deadline = min(self._deadline, time.monotonic() + self._request.grace_seconds + CLEANUP_SLACK)
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(_frames.CANCEL)
                self._proc.stdin.flush()
            except (OSError, ValueError):
                pass  # shellsup is already gone: its exit ends the wait

    # -- one step at a time -------------------------------------------------

    def _step(self, selector: selectors.BaseSelector, open_fds: set) -> None:
        """Handle buffered frames, then wait for output or the deadline."""
        self._handle_frames()
        if self._session.done and not self._done_seen:
            self._done_seen = True
            self._close_stdin()  # shellsup is done; it exits without waiting for EOF
            self._deadline = time.monotonic() + EXIT_WAIT
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            self._on_deadline()
            return
        for key, _ in selector.select(remaining):
            data = os.read(key.fd, READ_SIZE)
            if not data:
                selector.unregister(key.fd)
                open_fds.discard(key.fd)
            elif key.fd == self._proc.stderr.fileno():  # type: ignore[union-attr]
                self._stderr += data
                del self._stderr[:-STDERR_TAIL]
            elif self._parsing:
                self._frames.feed(data)

    def _handle_frames(self) -> None:
        while self._parsing:
            frame = self._frames.next()
            if frame is None:
                return
            chunk = self._session.handle(frame)
            if chunk is not None and self._deliver is not None:
                self._deliver(*chunk)

    def _on_deadline(self) -> None:
        now = time.monotonic()
        if self._killed:
            raise _GiveUp
        if self._session.done or self._cancel_sent or not self._parsing:
            self._kill()
            self._deadline = now + EXIT_WAIT
            return
        # shellsup overran timeout + grace + SAFETY without reporting: make it stop.
        self._remember(ShellsupError(
            f"protocol: shellsup did not report within {self._request.timeout} s timeout "
            f"+ {self._request.grace_seconds} s grace + {SAFETY} s",
            PROTOCOL,
        ))
        self.cancel()

    def _abort(self, exc: BaseException) -> None:
        """Remember the first exception and make shellsup clean up; keep reading."""
        self._remember(exc)
        self._deliver = None  # no progress after an exception
        if isinstance(exc, ShellsupError) and exc.category == PROTOCOL and self._parsing:
            # The frame stream cannot be trusted any more: stop reading it, and
            # let EOF on the control channel tell shellsup to cancel.
            self._parsing = False
            self._close_stdin()
            self._deadline = min(self._deadline, time.monotonic() + self._request.grace_seconds + CLEANUP_SLACK)
        else:
            self.cancel()

    def _remember(self, exc: BaseException) -> None:
        if self._pending is None:
            self._pending = exc

    # -- the end ------------------------------------------------------------

    def _close_stdin(self) -> None:
        with self._lock:
            if self._stdin_closed or self._proc is None:
                return
            self._stdin_closed = True
            try:
                self._proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass  # a failed flush of an unsent cancel: shellsup is gone

    def _kill(self) -> None:
        self._killed = True
        try:
            self._proc.kill()  # type: ignore[union-attr]
        except OSError:
            pass  # already exited

    def _reap(self) -> None:
        """Close our ends and wait for shellsup, killing it if it will not exit."""
        proc = self._proc
        assert proc is not None
        self._close_stdin()
        try:
            proc.wait(timeout=EXIT_WAIT)
        except subprocess.TimeoutExpired:
            self._kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()

    def _outcome(self) -> SkillResult:
        return self._session.outcome(self._pending, self._how(), self._stderr)

    def _how(self) -> str:
        proc = self._proc
        assert proc is not None
        return "was killed by the binding" if self._killed else f"exited with status {proc.returncode}"
