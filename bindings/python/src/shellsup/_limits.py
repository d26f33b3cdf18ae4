"""Every number the binding relies on, read from the one table.

LIMITS is what a request may be, and BINDING_SLACK how much longer than
shellsup's promises the binding waits before it acts: both are
``limits.json``, package data that is the repository's
``testdata/limits.json`` (a link in the source tree, a copy in a wheel or
an install). shellsup's ``request`` package states the same numbers, and a
Go test checks them against that file, so each rule has one statement.
The meaning of each entry is in docs/bindings.md, "The one table".
"""

from __future__ import annotations

import json
import pkgutil
from typing import Any, Dict


def _table() -> Dict[str, Any]:
    data = pkgutil.get_data(__name__.rpartition(".")[0], "limits.json")
    if data is None:  # pragma: no cover - a loader without get_data
        raise ImportError("shellsup: cannot read its package data limits.json")
    return json.loads(data)


LIMITS: Dict[str, Any] = _table()
BINDING_SLACK: Dict[str, Any] = LIMITS.pop("bindingSlack")

DEFAULT_TIMEOUT = LIMITS["timeout"]["default"]
MAX_TIMEOUT = LIMITS["timeout"]["max"]
DEFAULT_GRACE = LIMITS["grace"]["default"]
MIN_GRACE = LIMITS["grace"]["min"]
MAX_GRACE = LIMITS["grace"]["max"]
DEFAULT_BUDGET = LIMITS["budget"]["default"]
MIN_BUDGET = LIMITS["budget"]["min"]
MAX_BUDGET = LIMITS["budget"]["max"]
MAX_COMMAND_BYTES = LIMITS["commandMaxBytes"]
ARG_LIMIT = MAX_COMMAND_BYTES + 1  # with the NUL
MIN_PROCS = LIMITS["maxProcs"]["min"]
MAX_PROCS = LIMITS["maxProcs"]["max"]
MIN_MEMORY = LIMITS["maxMemory"]["min"]
DEFAULT_LIFETIME = LIMITS["lifetime"]["default"]
MAX_LIFETIME = LIMITS["lifetime"]["max"]
DEFAULT_SPILL_MAX = LIMITS["spillMax"]["default"]
MIN_SPILL_MAX = LIMITS["spillMax"]["min"]
MAX_BYTE_COUNT = LIMITS["byteCountMax"]
CLEANUP_BOUND = sum(LIMITS["cleanup"].values())  # seconds past the grace

# WATCHDOG_MARGIN: seconds the binding waits beyond what shellsup promises
# (timeout + grace for a run; grace for a cleanup after a cancel or a
# SIGTERM) before it concludes that shellsup stopped reporting and acts.
WATCHDOG_MARGIN = float(BINDING_SLACK["watchdogMarginSeconds"])
# EXIT_WAIT: seconds the binding waits for shellsup to exit after its last
# frame, or after SIGKILL, before it stops waiting.
EXIT_WAIT = float(BINDING_SLACK["exitWaitSeconds"])
# STDERR_KEPT: bytes of shellsup's stderr kept (the tail) for error messages.
STDERR_KEPT = int(BINDING_SLACK["stderrKeptBytes"])


def marker(budget: int) -> str:
    """The text that ends a truncated capture, on the stream that overflowed."""
    return f"\n... output truncated at {budget}-byte capture limit ...\n"


def budget_fits(budget: int) -> bool:
    """Whether budget holds its own marker plus one byte of text."""
    return budget >= len(marker(budget).encode()) + 1
