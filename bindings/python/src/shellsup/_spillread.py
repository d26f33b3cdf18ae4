"""Reading a job's spill files: each stream once, in order, decoded as shellsup decodes.

shellsup writes each stream's raw bytes to its spill file as they arrive;
a reader takes them from an offset on and decodes them with Python's
incremental UTF-8 decoder in "replace" mode (maximal-subpart U+FFFD, the
rule shellsup's own decoder follows), so a code point split across writes
or reads survives and every byte is decoded exactly once.
"""

from __future__ import annotations

import codecs
import os
import stat
from typing import Optional

TAIL_BYTES = 1 << 20  # bytes of each stream output(tail=N) looks back at most


class SpillFileError(OSError):
    """A spill path that is not what shellsup made: a link, another user's, or open to others."""


def _check_private(fd: int, path: str, want_dir: bool) -> None:
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode) != want_dir or not (want_dir or stat.S_ISREG(st.st_mode)):
        raise SpillFileError(f"{path!r} is not what shellsup made (file type {stat.S_IFMT(st.st_mode):o})")
    if st.st_uid != os.geteuid():
        raise SpillFileError(f"{path!r} is owned by uid {st.st_uid}, not this process's ({os.geteuid()})")
    if st.st_mode & 0o077:
        raise SpillFileError(f"{path!r} is open to group or others (mode {stat.S_IMODE(st.st_mode):04o}); shellsup makes it private")


def open_spill(path: str) -> int:
    """Open a spill file read-only, only if it is what shellsup made.

    The run directory is opened first (no symbolic link), then the file
    relative to it (no symbolic link); both must belong to this process's
    user and be open to no one else (shellsup makes them 0700 and 0600).
    Raises FileNotFoundError when either is missing, SpillFileError when
    either is not what shellsup made.
    """
    directory, name = os.path.split(path)
    dfd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        _check_private(dfd, directory, True)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
    finally:
        os.close(dfd)
    try:
        _check_private(fd, path, False)
    except BaseException:
        os.close(fd)
        raise
    return fd


class SpillReader:
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
                self._fd = open_spill(self.path)
            except FileNotFoundError:
                return None
        return self._fd


def tail_lines(path: str, lines: int, max_bytes: int = TAIL_BYTES) -> str:
    """The last lines of a file, looking back at most max_bytes."""
    try:
        fd = open_spill(path)
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
    if lines <= 0 or not text:
        return ""
    ends = text.endswith("\n")
    kept = text[: -1 if ends else None].split("\n")[-lines:]  # lines end at "\n" only, as in a log
    return "\n".join(kept) + ("\n" if ends else "")
