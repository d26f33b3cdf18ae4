"""The shellsup child process, as every driver handles it.

Spawned with subprocess.Popen in both drivers: nothing here kills shellsup
behind the binding's back (asyncio's subprocess transport SIGKILLs its
child when it is closed or collected, which would leave the command's tree
running). If the binding's process dies or drops its end of the control
channel, shellsup sees EOF and cleans up by itself.

The control channel (shellsup's stdin) and the frame stream (its stdout)
are each one end of a socketpair(AF_UNIX, SOCK_STREAM), not a pipe. The
command runs as the caller's user and can read the caller's /proc; a pipe
can be reopened through /proc/<caller>/fd/N, in either direction, so the
command could write forged frames (a clean totals) into the frame stream,
or read the cancel frames out of the control pipe. A socket cannot be
opened through /proc (ENXIO). The binding's ends are close-on-exec, and
its copies of shellsup's ends are closed right after the spawn.

Signals go through a pidfd where the interpreter has one (Python 3.9+),
so they can never reach a process that reused shellsup's pid.

shellsup runs in a process group of its own, in Python's session. The
command runs as Python's user and can stop shellsup (kill -STOP $PPID);
were shellsup in Python's group, that group would then hold a stopped
process, and the moment it became orphaned (Python started in the
background by a shell that has since exited, or by a daemon without job
control) the kernel would send the whole group SIGHUP and SIGCONT, and
Python dies of SIGHUP. In its own group only shellsup gets them. A
terminal's Ctrl-C then reaches Python alone, whose KeyboardInterrupt
handling cancels the run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import _core, _dumpable, _frames, _pin
from ._errors import INTERNAL, ShellsupError
from ._validate import Request

READ_SIZE = 1 << 18


# The Popen arguments that put shellsup in a process group of its own.
# Python 3.11+ has process_group: _posixsubprocess calls setpgid(0, 0)
# between fork and exec, with no Python code in the child, and shellsup
# stays in the caller's session. Before 3.11 the only way to keep the
# session would be preexec_fn, which runs Python code in the forked child
# (unsafe with threads; refused in subinterpreters, e.g. mod_wsgi's, with
# a RuntimeError): there start_new_session=True (setsid in C) is used
# instead. A session of its own is a group of its own too; shellsup never
# uses a terminal, and bash runs in a session of its own either way.
OWN_GROUP: Dict[str, Any] = {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True}


class Shellsup:
    """One spawned shellsup: its pipes, its pidfd, signals and exit status."""

    def __init__(self, core: "_core.Core") -> None:
        request: Request = core.request
        control, their_control = _socketpair()
        frames, their_frames = _socketpair(control, their_control)
        _dumpable.hold()  # until close(): see _dumpable
        self._held = True
        try:
            self.proc = subprocess.Popen(
                core.argv,
                stdin=their_control.fileno(),
                stdout=their_frames.fileno(),
                stderr=subprocess.PIPE,
                env=request.env,
                bufsize=0,
                **OWN_GROUP,
                **_pin.spawn_kwargs(core.binary),
            )
        except OSError as exc:
            control.close()
            frames.close()
            self._release()
            raise core.spawn_failed(exc) from exc
        finally:
            their_control.close()  # shellsup has its own copies now
            their_frames.close()
        self.control: Optional[socket.socket] = control  # write end: cancel and ports frames
        self.frames = frames  # read end: shellsup's frames
        self.pidfd: Optional[int] = None
        if hasattr(os, "pidfd_open"):
            try:
                self.pidfd = os.pidfd_open(self.proc.pid)  # not reaped yet: it is ours
            except OSError:
                self.pidfd = None  # an old kernel: fall back to polling
        self.stopped_reading = False

    @property
    def control_open(self) -> bool:
        """Whether the control channel is still open on the binding's side."""
        return self.control is not None

    def send(self, frame: bytes) -> bool:
        """Write a control frame; False if the channel is closed or shellsup is gone.

        A few bytes into a socket shellsup drains: never blocks. MSG_NOSIGNAL:
        a shellsup that is gone is EPIPE, never SIGPIPE, whatever the
        interpreter's SIGPIPE disposition.
        """
        control = self.control
        if control is None:
            return False
        try:
            control.sendall(frame, socket.MSG_NOSIGNAL)
        except OSError:
            return False  # shellsup is already gone: its exit ends the wait
        return True

    @property
    def stdout_fd(self) -> int:
        return self.frames.fileno()

    @property
    def stderr_fd(self) -> int:
        assert self.proc.stderr is not None
        return self.proc.stderr.fileno()

    def apply(self, actions: List[str]) -> None:
        """Carry out the core's actions, in order."""
        for action in actions:
            if action == _core.WRITE_CANCEL:
                self._write_cancel()
            elif action == _core.CLOSE_STDIN:
                self.close_stdin()
            elif action == _core.STOP_READING:
                self.stopped_reading = True
            else:
                self.signal(_core.SIGNALS[action])

    def _write_cancel(self) -> None:
        self.send(_frames.CANCEL)

    def close_stdin(self) -> None:
        """Close the control channel: EOF for shellsup."""
        control, self.control = self.control, None
        if control is not None:
            control.close()  # nothing is buffered; a close error changes nothing

    def signal(self, sig: int) -> None:
        """Send sig to shellsup unless it has been reaped."""
        if self.proc.returncode is not None:
            return
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, sig)
            else:
                self.proc.send_signal(sig)
        except ProcessLookupError:
            pass  # exited, not yet reaped

    def poll(self) -> Optional[int]:
        """shellsup's exit status if it has exited (it is then reaped), else None."""
        return self.proc.poll()

    def settled(self, core: "_core.Core", reading: bool) -> bool:
        """Whether the run is over for a driver: its pipes are done (``reading`` says
        whether the driver still has output to read) and shellsup has exited, or the
        core gave up reading; tells the core the exit status once known."""
        if self.stopped_reading:
            if self.poll() is not None:
                core.exited(self.proc.returncode)  # type: ignore[arg-type]
            return True
        if reading:
            return False
        code = self.poll()
        if code is None:
            return False
        core.exited(code)
        return True

    def is_stopped(self) -> bool:
        """Whether shellsup is in the stopped state (SIGSTOP, or a terminal's Ctrl-Z)."""
        if self.proc.returncode is not None:
            return False
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            return False
        # pid (comm) state ...: comm may hold spaces and parentheses; the last ")" ends it.
        fields = stat[stat.rfind(b")") + 2:].split()
        return bool(fields) and fields[0] in (b"T", b"t")

    def _release(self) -> None:
        if self._held:
            self._held = False
            _dumpable.release()

    def close(self) -> None:
        """Close every fd the binding holds; a shellsup still running is left to exit alone."""
        self._release()
        self.close_stdin()
        self.frames.close()
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def _socketpair(*opened: socket.socket) -> Tuple[socket.socket, socket.socket]:
    """One socketpair(AF_UNIX, SOCK_STREAM), both ends close-on-exec: the binding's, then shellsup's."""
    try:
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:  # EMFILE, ENFILE, ENOMEM: the machine, not the request
        for s in opened:
            s.close()
        raise ShellsupError(f"creating a socketpair for shellsup's frames: {exc}", INTERNAL) from exc
