"""Driving one shellsup process from an asyncio event loop (run_async()).

An I/O loop over the core (``_core.Core``), run in the caller's own task:
shellsup's stdout and stderr are read by loop readers (add_reader), its exit
is seen through its pidfd, and the loop sleeps until the next output or the
core's deadline. A CancelledError — the task cancelled, ``asyncio.wait_for``
running out, Ctrl-C under ``asyncio.run``, or ``asyncio.run`` cancelling
every task at shutdown, as often as it comes — goes to the core like any
other interruption: shellsup is told to cancel, the loop goes on until
shellsup has reported (bounded by the core's deadlines), and then the first
CancelledError is re-raised.

If the loop is closed with the run in flight, or the task is destroyed, the
binding closes its end of the control channel: shellsup sees EOF, cleans up,
and exits by itself.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Optional, Tuple

from . import _core
from ._errors import ShellsupError
from ._process import READ_SIZE, Shellsup
from ._result import SkillResult
from ._validate import Request

POLL = 0.05  # seconds between exit checks once shellsup's pipes are closed
HIGH_WATER = 64  # reads queued before the pipes are paused


class AsyncRun:
    """One shellsup process in frames mode, driven by the running event loop."""

    def __init__(self, request: Request, binary: str, deliver: Optional[Callable[[str, str], Any]]) -> None:
        self._core = _core.Core(request, binary)
        self._deliver = deliver
        self._proc: Optional[Shellsup] = None
        self._inbox: Deque[Tuple[str, bytes]] = deque()
        self._open = {"stdout", "stderr"}
        self._fds: Dict[int, str] = {}  # shellsup's stdout and stderr
        self._wake: Optional[asyncio.Future] = None
        self._exited = False  # the pidfd said shellsup exited
        self._paused = False

    async def wait(self) -> SkillResult:
        """Spawn shellsup and drive the run; on cancellation, cancel it, await cleanup, re-raise."""
        loop = asyncio.get_running_loop()
        proc = self._proc = Shellsup(self._core)
        try:
            self._core.spawned(time.monotonic())
            self._apply()
            self._connect(loop, proc)
            while not self._finished():
                await self._step(loop)
        except GeneratorExit:
            proc.close_stdin()  # the task is being destroyed: shellsup cleans up on EOF
            raise
        finally:
            self._disconnect(loop, proc)
        if not self._core.reported:  # killing a leaf or sweeping blocks: not on the loop
            await loop.run_in_executor(None, self._core.clean_leftovers)
        return self._core.outcome()

    # -- setting up and tearing down --------------------------------------------

    def _connect(self, loop: asyncio.AbstractEventLoop, proc: Shellsup) -> None:
        self._fds = {proc.stdout_fd: "stdout", proc.stderr_fd: "stderr"}
        for fd in self._fds:
            os.set_blocking(fd, False)
            loop.add_reader(fd, self._readable, fd)
        if proc.pidfd is not None:
            loop.add_reader(proc.pidfd, self._on_exit, loop, proc.pidfd)

    def _disconnect(self, loop: asyncio.AbstractEventLoop, proc: Shellsup) -> None:
        if not loop.is_closed():
            for fd in self._watched(proc):
                loop.remove_reader(fd)
        proc.close()

    def _watched(self, proc: Shellsup) -> list:
        fds = [fd for fd, name in self._fds.items() if name in self._open]
        if proc.pidfd is not None and not self._exited:
            fds.append(proc.pidfd)
        return fds

    def _on_exit(self, loop: asyncio.AbstractEventLoop, pidfd: int) -> None:
        loop.remove_reader(pidfd)
        self._exited = True
        self._wakeup()

    # -- the loop ----------------------------------------------------------------

    def _finished(self) -> bool:
        assert self._proc is not None
        return self._proc.settled(self._core, reading=bool(self._open or self._inbox))

    async def _step(self, loop: asyncio.AbstractEventLoop) -> None:
        """Take what arrived, deliver progress, then sleep until more arrives or the deadline."""
        try:
            self._take_inbox()
            await self._deliver_chunks()
            now = time.monotonic()
            remaining = self._core.deadline - now
            if remaining <= 0:
                self._core.deadline_passed(now, self._proc.is_stopped())  # type: ignore[union-attr]
                self._apply()
                return
            if self._inbox:
                return
            if not self._open:
                # Waiting for the exit alone: poll too, as a pidfd's wakeup can
                # come just before the exit status is there to collect.
                remaining = min(remaining, POLL)
            await self._sleep(loop, remaining)
        except asyncio.CancelledError as exc:
            self._interrupted(exc)
        except (Exception, KeyboardInterrupt) as exc:
            self._core.fail(exc, time.monotonic())
            self._apply()

    def _take_inbox(self) -> None:
        while self._inbox:
            name, data = self._inbox.popleft()
            if not data:
                self._open.discard(name)
                if name == "stdout":
                    self._core.stdout_closed(time.monotonic())
            elif name == "stderr":
                self._core.stderr(data)
            else:
                self._core.stdout(data)
        if self._paused:
            self._paused = False
            loop = asyncio.get_running_loop()
            for fd, name in self._fds.items():
                if name in self._open:
                    loop.add_reader(fd, self._readable, fd)

    async def _deliver_chunks(self) -> None:
        while True:
            try:
                chunk = self._core.next_chunk(time.monotonic())
            except ShellsupError as exc:  # a frame out of turn
                self._core.fail(exc, time.monotonic())
                chunk = None
            self._apply()
            if chunk is None:
                return
            if self._deliver is None:
                continue
            try:
                returned = self._deliver(*chunk)
                if inspect.isawaitable(returned):
                    await returned
            except asyncio.CancelledError as exc:
                self._interrupted(exc)
            except (Exception, KeyboardInterrupt) as exc:
                self._core.fail(exc, time.monotonic())
                self._apply()

    async def _sleep(self, loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        wake = self._wake = loop.create_future()
        timer = loop.call_later(seconds, self._wakeup)
        try:
            await wake
        finally:
            timer.cancel()
            self._wake = None

    # -- callbacks from the loop ----------------------------------------------------

    def _readable(self, fd: int) -> None:
        try:
            data = os.read(fd, READ_SIZE)
        except BlockingIOError:
            return
        name = self._fds[fd]
        if not data:
            asyncio.get_running_loop().remove_reader(fd)
        self._inbox.append((name, data))
        if len(self._inbox) >= HIGH_WATER and not self._paused:
            self._paused = True  # resumed once the driver has taken the inbox
            for other in self._fds:
                if self._fds[other] in self._open and (self._fds[other], b"") not in self._inbox:
                    asyncio.get_running_loop().remove_reader(other)
        self._wakeup()

    def _wakeup(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    # -- helpers ----------------------------------------------------------------------

    def _interrupted(self, exc: BaseException) -> None:
        """A CancelledError: cancel the run, keep going until shellsup has cleaned up."""
        self._core.fail(exc, time.monotonic())
        self._apply()

    def _apply(self) -> None:
        if self._proc is not None:  # before the spawn, actions wait in the core
            self._proc.apply(self._core.take())
