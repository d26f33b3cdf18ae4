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
from typing import Optional

TAIL_BYTES = 1 << 20  # bytes of each stream output(tail=N) looks back at most


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
                self._fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
        return self._fd


def tail_lines(path: str, lines: int, max_bytes: int = TAIL_BYTES) -> str:
    """The last lines of a file, looking back at most max_bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
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
