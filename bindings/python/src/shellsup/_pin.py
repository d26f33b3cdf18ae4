"""Pinning the shellsup binary: resolved once per process, run from a sealed copy.

A command runs as the harness's uid. If that uid can write the binary (a
wheel in a user venv, ``~/.local/bin``) or a directory earlier on ``$PATH``,
the command could replace or plant a ``shellsup`` that every later run would
execute. So the first run resolves the binary (``find_binary``) for the
inputs it depends on (``$SHELLSUP_BIN`` and ``$PATH``), copies it into a
memfd sealed against writing, growing and shrinking, and every later run with
the same inputs executes that copy as ``/proc/self/fd/N`` (``argv[0]`` stays
the path), without looking again. Where memfds are refused (an old kernel,
``vm.memfd_noexec=2``) it keeps the file open and runs that inode: a rename
over the path or a plant on ``$PATH`` no longer reaches later runs, an
in-place rewrite of the file still does. The first resolution trusts the file
system as it is.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from typing import Any, Dict, Tuple

from ._errors import EXEC_FAILED, ShellsupError
from ._find import find_binary

_MFD_EXEC = 0x0010  # Linux 6.3 and later warn when neither it nor MFD_NOEXEC_SEAL is given
_SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL

_lock = threading.Lock()
_resolved: Dict[Tuple[Any, Any], str] = {}  # ($SHELLSUP_BIN, $PATH) -> the binary found
_fds: Dict[str, int] = {}  # that binary -> the fd of its pinned copy


def _memfd() -> int:
    flags = os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING
    try:
        return os.memfd_create("shellsup", flags | _MFD_EXEC)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
    return os.memfd_create("shellsup", flags)


def _copy(path: str) -> int:
    """A sealed memfd holding the bytes of path (or path itself, held open)."""
    src = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        mem = _memfd()
    except (OSError, AttributeError):
        return src  # no memfd: pin the inode
    try:
        with os.fdopen(src, "rb", closefd=True) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(mem, view):]
        fcntl.fcntl(mem, fcntl.F_ADD_SEALS, _SEALS)
    except BaseException:
        os.close(mem)
        raise
    return mem


def pinned_binary() -> str:
    """The binary to run (its path), resolved and pinned on first use."""
    key = (os.environ.get("SHELLSUP_BIN"), os.environ.get("PATH"))
    with _lock:
        binary = _resolved.get(key)
        if binary is not None:
            return binary
        binary = find_binary()
        if binary not in _fds:
            try:
                _fds[binary] = _copy(binary)
            except OSError as exc:
                raise ShellsupError(f"cannot pin the shellsup binary {binary!r}: {exc}", EXEC_FAILED) from exc
        _resolved[key] = binary
        return binary


def spawn_kwargs(binary: str) -> Dict[str, Any]:
    """subprocess arguments that run the pinned copy of binary (none if it was never pinned)."""
    with _lock:
        fd = _fds.get(binary)
    if fd is None:
        return {}
    return {"executable": f"/proc/self/fd/{fd}", "pass_fds": (fd,)}
