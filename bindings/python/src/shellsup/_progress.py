"""The default progress: the command's output as it arrives, and one line
when the capture budget is spent, saying that the rest goes uncaptured and
how to keep its end."""

from __future__ import annotations

import re
import sys
from typing import Any, Callable, Optional

# The head capture's marker (shellsup's request.Marker), which ends the last
# progress text of a run whose budget is spent: nothing follows it.
_MARKER = re.compile(r"\n\.\.\. output truncated at (\d+)-byte capture limit \.\.\.\n\Z")


def _write(stream: str, text: str) -> None:
    out = sys.stderr if stream == "stderr" else sys.stdout
    if out is None:  # pythonw, or a closed stream: nowhere to write
        return
    out.write(text)
    out.flush()


def spent_line(budget: int, capture: Optional[str]) -> str:
    """The line the default progress prints on sys.stderr once the budget is spent."""
    if capture in ("tail", "head+tail"):
        return (f"shellsup: the output goes on past the {budget}-byte capture budget, not shown here; "
                f'the result keeps its end (capture="{capture}")\n')
    return (f"shellsup: the output goes on past the {budget}-byte capture budget, neither captured nor shown; "
            'to keep its end pass capture="head+tail" (spill= keeps every byte)\n')


def _printer(capture: Optional[str]) -> Callable[[str, str], None]:
    def printer(stream: str, text: str) -> None:
        _write(stream, text)
        spent = _MARKER.search(text)
        if spent:
            if stream != "stderr" and sys.stdout is not None:
                sys.stdout.flush()
            _write("stderr", spent_line(int(spent.group(1)), capture))
    return printer


_head_printer = _printer(None)


def print_progress(stream: str, text: str) -> None:
    """The default progress: write text to sys.stdout or sys.stderr and flush,
    as the skill did. When the capture budget is spent (the text ends with
    the truncation marker) one line follows on sys.stderr: the output goes on,
    neither captured nor shown, and ``capture="head+tail"`` keeps its end."""
    _head_printer(stream, text)


def default_progress(progress: Any, capture: Optional[str]) -> Any:
    """progress as given, or, for the default printer and a tail capture, one
    whose line at the spent budget says the result keeps the end."""
    if progress is print_progress and capture in ("tail", "head+tail"):
        return _printer(capture)
    return progress
