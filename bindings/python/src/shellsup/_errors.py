"""The exceptions the package raises for runs that cannot happen or did not end cleanly."""

from __future__ import annotations

from typing import Any, Optional

# Categories of ShellsupError. The first four are the categories of
# shellsup's own error frames (the README's "Frames mode"); the others are
# the binding's: a broken conversation with shellsup, no binary, and a
# cleanup that left processes alive.
VALIDATION = "validation"
CONTAINMENT_UNAVAILABLE = "containment_unavailable"
EXEC_FAILED = "exec_failed"
INTERNAL = "internal"
PROTOCOL = "protocol"
NOT_FOUND = "not_found"
CLEANUP_INCOMPLETE = "cleanup_incomplete"
JOB_EXITED = "job_exited"  # a job ended while it was waited for
JOB_TIMEOUT = "timeout"  # a wait on a job ran out of time

CATEGORIES = (VALIDATION, CONTAINMENT_UNAVAILABLE, EXEC_FAILED, INTERNAL, PROTOCOL, NOT_FOUND, CLEANUP_INCOMPLETE,
              JOB_EXITED, JOB_TIMEOUT)


class ShellsupError(RuntimeError):
    """A run that could not happen, or whose outcome could not be learned.

    ``category`` says which:

    - ``"validation"``: an argument was refused before anything was spawned;
      the message quotes the bad value.
    - ``"containment_unavailable"``: shellsup refused to run because it could
      not guarantee cleanup (no subreaper, no procfs).
    - ``"exec_failed"``: shellsup or bash could not be executed.
    - ``"internal"``: shellsup reported an internal failure.
    - ``"protocol"``: shellsup exited, was killed, stopped reporting, or
      spoke out of turn, without a trustworthy result; the message says what
      happened and what is known to be left running.
    - ``"not_found"``: no shellsup binary was found; the message lists every
      place that was searched.
    - ``"cleanup_incomplete"``: raised as CleanupError, below.

    Non-zero exits, timeouts and cancellations are not errors: they are
    results. It subclasses RuntimeError so that code written against the
    ``shell`` skill (``except RuntimeError``) keeps working.
    """

    def __init__(self, message: str, category: str) -> None:
        super().__init__(message)
        self.category = category

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Any:  # keep category across pickling
        return (type(self), (self.message, self.category))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, category={self.category!r})"


class CleanupError(ShellsupError):
    """The run ended, but cleanup could not kill every process it started.

    ``result`` holds the full SkillResult (its 13 keys still show the
    command's own exit code); ``result.cleanup["stragglers"]`` lists the
    survivors. Raised so that a caller who reads only the 13 keys cannot
    mistake the run for a clean success; the CLI exits 125 in this case.
    ``category`` is ``"cleanup_incomplete"``.
    """

    def __init__(self, message: str, result: Optional[Any] = None) -> None:
        super().__init__(message, CLEANUP_INCOMPLETE)
        self.result = result

    def __reduce__(self) -> Any:
        return (type(self), (self.message, self.result))


class JobError(ShellsupError):
    """A job ended before what was awaited happened (category ``"job_exited"``).

    ``result`` holds the job's SkillResult (exit code, captured output,
    cleanup) when it is known; the message quotes the exit code and the last
    lines of the output.
    """

    def __init__(self, message: str, category: str = JOB_EXITED, result: Optional[Any] = None) -> None:
        super().__init__(message, category)
        self.result = result

    def __reduce__(self) -> Any:
        return (type(self), (self.message, self.category, self.result))


class JobTimeoutError(JobError, TimeoutError):
    """A wait on a job ran out of time (category ``"timeout"``); the job is left running."""

    def __init__(self, message: str, category: str = JOB_TIMEOUT, result: Optional[Any] = None) -> None:
        super().__init__(message, category, result)
