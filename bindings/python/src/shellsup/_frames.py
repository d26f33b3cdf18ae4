"""The frames of shellsup's wire protocol (the README's "Frames mode").

A frame is a 4-byte big-endian length N (1 <= N <= 1 MiB) followed by N bytes
holding one msgpack map with string keys and a string ``type``. The length
is checked before the body is read, so an oversized frame is refused without
buffering it.
"""

from __future__ import annotations

import struct
from typing import Any, Dict, Optional

import msgpack

from ._errors import PROTOCOL, ShellsupError

HEADER_SIZE = 4
MAX_FRAME_SIZE = 1 << 20

_HEADER = struct.Struct(">I")


def encode(frame: Dict[str, Any]) -> bytes:
    """Return one frame, length prefix included."""
    body = msgpack.packb(frame, use_bin_type=True)
    if not 1 <= len(body) <= MAX_FRAME_SIZE:
        raise ValueError(f"frame body is {len(body)} bytes; the limit is {MAX_FRAME_SIZE}")
    return _HEADER.pack(len(body)) + body


CANCEL = encode({"type": "cancel"})
PORTS = encode({"type": "ports"})  # a query: shellsup answers with a ports frame
MAX_PORTS = 4096  # the most entries a ports answer lists (the lowest ports); "omitted" counts the rest


def ports_query(port: int) -> bytes:
    """A ports query about one port number: the answer lists only its listeners, so it is never cut."""
    return encode({"type": "ports", "ports": [{"port": port}]})


def body_size(header: bytes) -> int:
    """Return the body size announced by a 4-byte header, refusing 0 and > 1 MiB."""
    (size,) = _HEADER.unpack(header)
    if size == 0:
        raise ShellsupError("protocol: empty frame (length 0) from shellsup", PROTOCOL)
    if size > MAX_FRAME_SIZE:
        raise ShellsupError(
            f"protocol: frame of {size} bytes from shellsup is over the {MAX_FRAME_SIZE}-byte limit",
            PROTOCOL,
        )
    return size


def decode_body(body: bytes) -> Dict[str, Any]:
    """Decode one frame body: a msgpack map with string keys and a string "type"."""
    try:
        frame = msgpack.unpackb(body, raw=False)
    except Exception as exc:  # msgpack raises several types, UnicodeDecodeError among them
        raise ShellsupError(f"protocol: undecodable frame from shellsup: {exc}", PROTOCOL) from exc
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        raise ShellsupError(
            f"protocol: frame from shellsup is not a map with a string type: {_clip(repr(frame))}",
            PROTOCOL,
        )
    if not all(isinstance(k, str) for k in frame):
        raise ShellsupError(f"protocol: frame from shellsup has non-string keys: {_clip(repr(frame))}", PROTOCOL)
    return frame


class Buffer:
    """Accumulates bytes read from shellsup and yields whole frames."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._need: Optional[int] = None  # body size of the frame in progress

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next(self) -> Optional[Dict[str, Any]]:
        """Return the next complete frame, or None if more bytes are needed."""
        if self._need is None:
            if len(self._buf) < HEADER_SIZE:
                return None
            self._need = body_size(bytes(self._buf[:HEADER_SIZE]))
            del self._buf[:HEADER_SIZE]
        if len(self._buf) < self._need:
            return None
        body = bytes(self._buf[: self._need])
        del self._buf[: self._need]
        self._need = None
        return decode_body(body)

    def pending(self) -> int:
        """Bytes of an incomplete frame held back (0 at a frame boundary)."""
        return len(self._buf) + (HEADER_SIZE if self._need is not None else 0)


def _clip(s: str, n: int = 200) -> str:
    return s if len(s) <= n else s[:n] + "..."
