"""Driving one shellsup process from an asyncio event loop (run_async()).

A pump task reads frames until shellsup has reported and exited; the
caller's task awaits it through asyncio.shield, so cancelling the caller
does not cut the conversation short: the caller sends a cancel frame, keeps
awaiting the pump (bounded), and then re-raises CancelledError.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Optional

from . import _frames, _run
from ._errors import EXEC_FAILED, PROTOCOL, ShellsupError
from ._result import SkillResult
from ._session import Session, add_note, unconfirmed
from ._validate import Request


class AsyncRun:
    """One shellsup process in frames mode, driven by the running event loop."""

    def __init__(self, request: Request, binary: str, deliver: Optional[Callable[[str, str], Any]]) -> None:
        self._request = request
        self._binary = binary
        self._deliver = deliver
        self._session = Session()
        self._stderr = bytearray()
        self._proc: Optional[asyncio.subprocess.Process] = None
        self._cancel_sent = False
        self._pending: Optional[BaseException] = None
        self._killed = False
        self._spawning = False  # the pump has begun spawning shellsup
        self._cancel_requested = False  # cancel() came before shellsup existed
        self._finished = False  # shellsup has exited and been waited for
        self._timer: Optional[asyncio.TimerHandle] = None

    async def wait(self) -> SkillResult:
        """Spawn shellsup and await the run; on cancellation, cancel it, await cleanup, re-raise."""
        pump = asyncio.ensure_future(self._pump())
        cancelled: Optional[BaseException] = None
        while not pump.done():
            try:
                await asyncio.shield(pump)
            except asyncio.CancelledError as exc:
                if cancelled is None:
                    cancelled = exc
                if not self._spawning:
                    pump.cancel()  # not begun: nothing is spawned
                else:
                    self.cancel()  # the pump's watchdog bounds the wait
            except BaseException:
                break  # the pump's own failure: raised by pump.result() below
        if cancelled is not None:
            if self._proc is not None and not self._session.done:
                add_note(cancelled, "shellsup: " + unconfirmed(self._how(), self._stderr))
            raise cancelled
        return pump.result()

    def cancel(self) -> None:
        """Ask shellsup to cancel the run; only the first call counts."""
        if self._cancel_sent or self._finished:
            return
        if self._proc is None:
            self._cancel_requested = True  # sent as soon as shellsup is spawned
            return
        self._cancel_sent = True
        self._arm(self._request.grace_seconds + _run.CLEANUP_SLACK, self._kill)
        stdin = self._proc.stdin
        if stdin is not None and not stdin.is_closing():
            try:
                stdin.write(_frames.CANCEL)
            except (OSError, RuntimeError):
                pass  # shellsup is already gone: its exit ends the wait

    async def _spawn(self) -> None:
        self._spawning = True
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self._request.argv(self._binary),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._request.env,
            )
        except OSError as exc:
            raise ShellsupError(f"cannot execute shellsup {self._binary!r}: {exc}", EXEC_FAILED) from exc
        request = self._request
        self._arm(request.timeout + request.grace_seconds + _run.SAFETY, self._overran)
        if self._cancel_requested:
            self.cancel()

    # -- the pump -------------------------------------------------------------

    async def _pump(self) -> SkillResult:
        await self._spawn()
        proc = self._proc
        assert proc is not None and proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.ensure_future(self._read_stderr())
        try:
            await self._read_frames(proc.stdout)
            self._close_stdin()
            self._arm(_run.EXIT_WAIT, self._kill)
            await proc.wait()
            await stderr_task
        finally:
            self._finished = True
            if self._timer is not None:
                self._timer.cancel()
            if not stderr_task.done():
                stderr_task.cancel()
        return self._outcome()

    async def _read_frames(self, stdout: asyncio.StreamReader) -> None:
        """Read frames until totals/error or EOF; exceptions stop delivery, not reading."""
        parsing = True
        while True:
            try:
                header = await stdout.readexactly(_frames.HEADER_SIZE)
                body = await stdout.readexactly(_frames.body_size(header))
                chunk = self._session.handle(_frames.decode_body(body))
                if chunk is not None and self._deliver is not None:
                    returned = self._deliver(*chunk)
                    if inspect.isawaitable(returned):
                        await returned
                if self._session.done:
                    return
            except asyncio.IncompleteReadError as exc:
                if exc.partial and parsing:
                    self._remember(ShellsupError("protocol: truncated frame from shellsup", PROTOCOL))
                return
            except asyncio.CancelledError:
                raise  # the pump itself is never cancelled but by the loop's shutdown
            except BaseException as exc:  # a progress callback's error, protocol
                self._remember(exc)
                self._deliver = None
                if isinstance(exc, ShellsupError) and exc.category == PROTOCOL:
                    parsing = False
                    break
                self.cancel()
        # The frames no longer make sense: EOF on the control channel makes
        # shellsup cancel; drain its stdout until it exits.
        self._close_stdin()
        self._arm(self._request.grace_seconds + _run.CLEANUP_SLACK, self._kill)
        while await stdout.read(1 << 16):
            pass

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while True:
            data = await self._proc.stderr.read(1 << 16)
            if not data:
                return
            self._stderr += data
            del self._stderr[:-_run.STDERR_TAIL]

    # -- helpers ----------------------------------------------------------------

    def _arm(self, delay: float, action: Callable[[], None]) -> None:
        """Replace the single watchdog: call action after delay seconds unless disarmed."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, action)

    def _overran(self) -> None:
        self._remember(ShellsupError(
            f"protocol: shellsup did not report within {self._request.timeout} s timeout "
            f"+ {self._request.grace_seconds} s grace + {_run.SAFETY} s",
            PROTOCOL,
        ))
        self.cancel()

    def _kill(self) -> None:
        self._killed = True
        try:
            self._proc.kill()  # type: ignore[union-attr]
        except ProcessLookupError:
            pass  # already exited
        self._arm(_run.EXIT_WAIT, self._give_up)

    def _give_up(self) -> None:
        """shellsup was killed and its pipes are still open (something else holds them): stop reading."""
        for reader in (self._proc.stdout, self._proc.stderr):  # type: ignore[union-attr]
            if reader is not None:
                reader.feed_eof()

    def _close_stdin(self) -> None:
        stdin = self._proc.stdin if self._proc is not None else None
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    def _remember(self, exc: BaseException) -> None:
        if self._pending is None:
            self._pending = exc

    def _outcome(self) -> SkillResult:
        return self._session.outcome(self._pending, self._how(), self._stderr)

    def _how(self) -> str:
        code = self._proc.returncode if self._proc is not None else None
        return "was killed by the binding" if self._killed else f"exited with status {code}"
