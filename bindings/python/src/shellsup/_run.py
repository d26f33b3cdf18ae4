"""Driving one shellsup process from the calling thread (run()).

An I/O loop over the core (``_core.Core``): one selector over shellsup's
stdout (frames), its stderr and its pidfd, waiting at most until the core's
deadline. Whatever interrupts the loop — KeyboardInterrupt, a progress
callback that raises, a frame that makes no sense — goes to the core, which
makes shellsup cancel and clean up; it is re-raised only once shellsup has
reported or been given up on.
"""

from __future__ import annotations

import os
import selectors
import threading
import time
from typing import Callable, Optional

from . import _core
from ._process import READ_SIZE, Shellsup
from ._result import SkillResult
from ._validate import Request

Deliver = Callable[[str, str], object]
POLL = 0.05  # seconds between exit checks once shellsup's pipes are closed


class Run:
    """One shellsup process in frames mode, driven from the calling thread.

    start() spawns it, wait() reads its frames until it exits and returns the
    result, cancel() (from any thread) asks it to cancel the run.
    """

    def __init__(self, request: Request, binary: str, deliver: Optional[Deliver]) -> None:
        self._core = _core.Core(request, binary)
        self._deliver = deliver
        self._lock = threading.RLock()  # the core and stdin: cancel() may come from another thread
        self._proc: Optional[Shellsup] = None
        self._open = set()  # fds not yet at EOF

    def start(self) -> None:
        """Spawn shellsup. Nothing else is started."""
        proc = Shellsup(self._core)
        with self._lock:
            self._proc = proc
            self._core.spawned(time.monotonic())
            self._apply()

    def wait(self) -> SkillResult:
        """Read frames until shellsup exits; return the result or raise."""
        proc = self._proc
        assert proc is not None
        selector = selectors.DefaultSelector()
        self._open = {proc.stdout_fd, proc.stderr_fd}
        try:
            for fd in self._open:
                selector.register(fd, selectors.EVENT_READ)
            if proc.pidfd is not None:
                selector.register(proc.pidfd, selectors.EVENT_READ)
            while not self._finished():
                try:
                    self._step(selector)
                except BaseException as exc:  # KeyboardInterrupt, a progress callback's error
                    with self._lock:
                        self._core.fail(exc, time.monotonic())
                        self._apply()
        finally:
            selector.close()
            proc.close()
        return self._core.outcome()

    def cancel(self) -> None:
        """Ask shellsup to cancel the run. Thread-safe; only the first call counts."""
        with self._lock:
            self._core.cancel(time.monotonic())
            self._apply()

    # -- one step at a time -------------------------------------------------

    def _finished(self) -> bool:
        assert self._proc is not None
        return self._proc.settled(self._core, reading=bool(self._open))

    def _step(self, selector: selectors.BaseSelector) -> None:
        """Deliver buffered progress, then wait for output, exit or the deadline."""
        self._deliver_chunks()
        with self._lock:
            now = time.monotonic()
            remaining = self._core.deadline - now
            if remaining <= 0:
                self._core.deadline_passed(now, self._proc.is_stopped())  # type: ignore[union-attr]
                self._apply()
                return
        if not self._open:
            # Waiting for the exit alone: poll too, as a pidfd's wakeup can
            # come just before the exit status is there to collect.
            remaining = min(remaining, POLL)
        for key, _ in selector.select(remaining):
            self._read(selector, key.fd)

    def _read(self, selector: selectors.BaseSelector, fd: int) -> None:
        proc = self._proc
        assert proc is not None
        if fd == proc.pidfd:
            selector.unregister(fd)  # readable once shellsup exited; reaped in _finished
            return
        data = os.read(fd, READ_SIZE)
        if not data:
            selector.unregister(fd)
            self._open.discard(fd)
            if fd == proc.stdout_fd:
                self._core.stdout_closed(time.monotonic())
        elif fd == proc.stderr_fd:
            self._core.stderr(data)
        else:
            self._core.stdout(data)

    def _deliver_chunks(self) -> None:
        while True:
            with self._lock:
                try:
                    chunk = self._core.next_chunk(time.monotonic())
                except _core.ShellsupError as exc:  # a frame out of turn
                    self._core.fail(exc, time.monotonic())
                    chunk = None
                self._apply()
            if chunk is None:
                return
            if self._deliver is not None:
                try:
                    self._deliver(*chunk)
                except BaseException as exc:
                    with self._lock:
                        self._core.fail(exc, time.monotonic())
                        self._apply()

    def _apply(self) -> None:
        if self._proc is not None:  # before the spawn, actions wait in the core
            self._proc.apply(self._core.take())
