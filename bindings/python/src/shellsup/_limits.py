"""Every number the binding relies on, stated once.

LIMITS is what a request may be. shellsup enforces the same limits itself;
the repository's ``testdata/limits.json`` holds them for both sides, and a
test checks that this table equals that file (a Go test checks the Go
constants against the same file).

The three slack numbers are the binding's own: how much longer than
shellsup's promises it waits before it acts. The Go binding uses the same
values.
"""

from __future__ import annotations

from typing import Any, Dict

LIMITS: Dict[str, Any] = {
    "timeout": {"default": 120, "max": 600},  # seconds, greater than 0
    "grace": {"default": 2, "min": 0, "max": 60},  # seconds between SIGTERM and SIGKILL at cleanup
    # bytes of capture, shared by stdout and stderr; the minimum holds the
    # truncation marker for itself plus one byte, the maximum keeps totals
    # (which carries the whole capture) inside one 1 MiB frame
    "budget": {"default": 65536, "min": 52, "max": 524288},
    # MAX_ARG_STRLEN: the kernel passes at most 131072 bytes, NUL included, in one argument
    "commandMaxBytes": 131071,
    # processes and threads at once (pids.max): 2 because under a v1 pids
    # limit the forking thread counts for an instant; the kernel's PID_MAX_LIMIT
    "maxProcs": {"min": 2, "max": 4194304},
    "maxMemory": {"min": 4194304},  # bytes (memory.max); a login shell needs that much
    # seconds a job may live (start(lifetime=), shellsup --lifetime), greater than 0
    "lifetime": {"default": 3600, "max": 604800},
    # bytes kept per spill file (spill_max=, shellsup --spill-max); 0 keeps none
    "spillMax": {"default": 268435456, "min": 0},
    # the largest byte count shellsup reads (2**62), for max_memory and spill_max
    "byteCountMax": 4611686018427387904,
    # seconds the cleanup takes at most past the grace: the kill loop, the
    # last kills' landing, the drain of pipes held from outside, totals to a
    # parent that is gone. WATCHDOG_MARGIN is set above their sum.
    "cleanup": {"killSeconds": 3, "landingSeconds": 0.1, "drainSeconds": 0.5, "goneFlushSeconds": 1},
}

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
WATCHDOG_MARGIN = 10.0
# EXIT_WAIT: seconds the binding waits for shellsup to exit after its last
# frame, or after SIGKILL, before it stops waiting.
EXIT_WAIT = 5.0
# STDERR_KEPT: bytes of shellsup's stderr kept (the tail) for error messages.
STDERR_KEPT = 8192

BINDING_SLACK: Dict[str, Any] = {
    "watchdogMarginSeconds": WATCHDOG_MARGIN,
    "exitWaitSeconds": EXIT_WAIT,
    "stderrKeptBytes": STDERR_KEPT,
}


def marker(budget: int) -> str:
    """The text that ends a truncated capture, on the stream that overflowed."""
    return f"\n... output truncated at {budget}-byte capture limit ...\n"


def budget_fits(budget: int) -> bool:
    """Whether budget holds its own marker plus one byte of text."""
    return budget >= len(marker(budget).encode()) + 1
