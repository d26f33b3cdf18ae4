"""The one exception the package raises for runs that cannot happen."""

from __future__ import annotations

# Categories of ShellsupError. The first four are shellsup's own error-frame
# categories (SPEC section 3) minus "internal", which is kept too; the last
# two are the binding's: a broken conversation with shellsup, and no binary.
VALIDATION = "validation"
CONTAINMENT_UNAVAILABLE = "containment_unavailable"
EXEC_FAILED = "exec_failed"
INTERNAL = "internal"
PROTOCOL = "protocol"
NOT_FOUND = "not_found"

CATEGORIES = (VALIDATION, CONTAINMENT_UNAVAILABLE, EXEC_FAILED, INTERNAL, PROTOCOL, NOT_FOUND)


class ShellsupError(RuntimeError):
    """A run that could not happen, or whose outcome could not be learned.

    ``category`` says which:

    - ``"validation"``: an argument was refused before anything was spawned;
      the message quotes the bad value.
    - ``"containment_unavailable"``: shellsup refused to run because it could
      not guarantee cleanup (no subreaper, no procfs).
    - ``"exec_failed"``: shellsup or bash could not be executed.
    - ``"internal"``: shellsup reported an internal failure.
    - ``"protocol"``: shellsup exited or spoke without reporting a result.
    - ``"not_found"``: no shellsup binary was found; the message lists every
      place that was searched.

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

    def __reduce__(self):  # keep category across pickling
        return (type(self), (self.message, self.category))

    def __repr__(self) -> str:
        return f"ShellsupError({self.message!r}, category={self.category!r})"
