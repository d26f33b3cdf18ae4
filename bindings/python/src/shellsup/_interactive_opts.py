"""The interactive options of a request (docs/interactive.md), as shellsup's flags; checked in _interactive."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple, Union


@dataclass(frozen=True)
class Interactive:
    """The interactive options of a request, as shellsup's flags."""

    pty: bool = False
    pty_size: Optional[Tuple[int, int]] = None  # (cols, rows)
    stdin_pipe: bool = False
    idle_timeout: Optional[Union[int, float]] = None
    stop_on_input: bool = False

    def flags(self) -> List[str]:
        flags = []
        if self.pty:
            flags.append("--pty")
        if self.pty_size is not None:
            flags.append(f"--pty-size={self.pty_size[0]}x{self.pty_size[1]}")
        if self.stdin_pipe:
            flags.append("--stdin=pipe")
        if self.idle_timeout is not None:
            flags.append("--idle-timeout=" + (repr(float(self.idle_timeout)) if isinstance(self.idle_timeout, float)
                                              else str(int(self.idle_timeout))))
        if self.stop_on_input:
            flags.append("--stop-on-input")
        return flags
