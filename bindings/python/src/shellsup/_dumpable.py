"""The harness is non-dumpable while a run or job of this package is open.

The command runs as the harness's user: while the harness is dumpable, such a
command can ptrace it or take its fds with pidfd_getfd (the frames sockets
included), and read /proc/<harness>/environ and /proc/<harness>/fd. A
non-dumpable process (prctl(PR_SET_DUMPABLE, 0)) refuses all of that to every
caller without CAP_SYS_PTRACE; a root command keeps it (run it with user=).
The first open run sets it, the last one to end gives the old setting back,
unless a run of this process was unreported (shellsup died, or its report did
not count): then the process stays non-dumpable for the rest of its life, as
what that command started may still be running as the harness's user.
The setting is per process and reset at exec: shellsup and the command do not
inherit it. Linux only; elsewhere nothing is done.
"""

import ctypes
import sys
import threading
from typing import Optional

_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4

_lock = threading.Lock()
_holds = 0
_was: Optional[int] = None
_kept = False  # a run was unreported: never dumpable again


def _prctl(option: int, arg: int = 0) -> int:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, arg, 0, 0, 0))
    except (OSError, AttributeError):
        return -1  # no libc prctl: nothing to do


def hold() -> None:
    """One more open run; the first makes the process non-dumpable."""
    global _holds, _was
    if not sys.platform.startswith("linux"):
        return
    with _lock:
        if _holds == 0:
            _was = _prctl(_PR_GET_DUMPABLE)
            _prctl(_PR_SET_DUMPABLE, 0)  # cannot fail for 0; if it did, the run goes on as before
        _holds += 1


def release() -> None:
    """One run fewer; the last gives back the setting the process had."""
    global _holds
    if not sys.platform.startswith("linux"):
        return
    with _lock:
        if _holds == 0:
            return
        _holds -= 1
        if _holds == 0 and _was == 1 and not _kept:
            _prctl(_PR_SET_DUMPABLE, 1)  # back as it was; a failure leaves it safer


def keep() -> None:
    """A run was unreported: non-dumpable for the rest of the process's life."""
    global _kept
    if not sys.platform.startswith("linux"):
        return
    with _lock:
        _kept = True
        _prctl(_PR_SET_DUMPABLE, 0)
