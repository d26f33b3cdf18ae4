"""What one run's frames have said so far (its transcript), shared by the sync and async drivers."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional, Tuple

from ._errors import INTERNAL, PROTOCOL, ShellsupError
from ._result import SkillResult, from_totals

STREAMS = ("stdout", "stderr")


class Transcript:
    """Follows the frames of one run: start, progress… (ports answers among them), [timeout|cancel], totals; or error."""

    def __init__(self) -> None:
        self.start: Optional[Dict[str, Any]] = None
        self.result: Optional[SkillResult] = None
        self.error: Optional[ShellsupError] = None
        self.totals: Optional[Dict[str, Any]] = None  # the totals frame itself, extra keys included
        self.announced: Optional[str] = None  # "timeout" or "cancel" once shellsup announced one
        self.ports: List[Dict[str, Any]] = []  # the last answer to a ports query
        self.ports_answers = 0  # how many answers have arrived
        self.ports_omitted = 0  # listeners the last answer left out past MAX_PORTS
        # Answers do not name their query; the n-th answer is the n-th query's (shellsup answers in order).
        self.ports_by_answer: Dict[int, List[Dict[str, Any]]] = {}
        self.waiting: Optional[Dict[str, Any]] = None  # the last waiting frame (docs/interactive.md)
        self.waiting_at = 0.0  # time.monotonic() when it arrived
        self.input_taken = 0  # bytes of input frames shellsup is done with (its last taken frame)

    @property
    def done(self) -> bool:
        """A totals or an error frame has arrived: shellsup's cleanup is over."""
        return self.result is not None or self.error is not None

    def handle(self, frame: Dict[str, Any]) -> Optional[Tuple[str, str]]:
        """Take one frame; return (stream, text) when it is progress to deliver."""
        kind = frame["type"]
        if self.done:
            raise _protocol(f"{kind} frame after the run ended")
        if kind == "start":
            if self.start is not None:
                raise _protocol("second start frame")
            self.start = frame
        elif kind == "error":
            if self.start is not None:
                raise _protocol("error frame after start")
            category = frame.get("category")
            message = frame.get("message")
            self.error = ShellsupError(
                message if isinstance(message, str) else repr(frame),
                category if isinstance(category, str) and category else INTERNAL,
            )
        elif kind == "progress":
            stream, text = frame.get("stream"), frame.get("text")
            if self.start is None or stream not in STREAMS or not isinstance(text, str):
                raise _protocol(f"bad progress frame {frame!r:.200}")
            return stream, text
        elif kind == "totals":
            if self.start is None:
                raise _protocol("totals frame before start")
            self.result = from_totals(frame)
            self.totals = frame
        elif kind == "ports":
            ports = frame.get("ports")
            if self.start is None or not isinstance(ports, (list, type(None))):
                raise _protocol(f"bad ports frame {frame!r:.200}")
            self.ports = [p for p in ports or () if isinstance(p, dict)]
            self.ports_by_answer[self.ports_answers + 1] = self.ports
            self.ports_by_answer.pop(self.ports_answers - 15, None)  # the last 16 are kept
            omitted = frame.get("omitted", 0)
            self.ports_omitted = omitted if isinstance(omitted, int) else 0
            self.ports_answers += 1
        elif kind == "taken":
            if isinstance(frame.get("bytes"), int):
                self.input_taken = frame["bytes"]
        elif kind == "waiting":
            self.waiting, self.waiting_at = frame, time.monotonic()
        elif kind in ("timeout", "cancel", "idle"):
            if self.announced is None:
                self.announced = kind
        # "timeout" and "cancel" only announce what totals will say (noted
        # in announced); unknown types are ignored, for forward compatibility.
        return None


def add_note(exc: BaseException, note: str) -> None:
    """Attach note to exc where the interpreter supports notes (3.11+)."""
    add = getattr(exc, "add_note", None)
    if add is not None:
        add(note)


def _protocol(what: str) -> ShellsupError:
    return ShellsupError(f"protocol: {what} from shellsup", PROTOCOL)
