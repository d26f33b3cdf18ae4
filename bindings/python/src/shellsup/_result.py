"""SkillResult: the outcome of one run, shaped like the shell skill's result."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Mapping, Optional

# The 13 keys of the shell skill's result, in its order (the README's "The result").
RESULT_KEYS = (
    "command",
    "cwd",
    "stdout",
    "stderr",
    "exitCode",
    "signal",
    "cancelled",
    "timedOut",
    "truncated",
    "totalBytes",
    "capturedBytes",
    "progressBytes",
    "durationMs",
)

# repr shows the outcome first, then the bulky text.
_REPR_ORDER = (
    "exitCode", "signal", "timedOut", "cancelled", "truncated", "durationMs",
    "totalBytes", "capturedBytes", "progressBytes", "command", "cwd", "stdout", "stderr",
)
_REPR_TEXT = 60  # characters of a long string shown by repr


class SkillResult(dict):
    """The result of a run: a dict with exactly the 13 keys of the shell skill.

    ``result["stdout"]``, ``result["exitCode"]`` and the rest mean what they
    meant in the skill (see the README). ``await result`` resolves to the
    result itself, as the skill's result did.

    Beyond the keys, attributes carry what shellsup adds:

    - ``status``: how the run ended, one word (the README's "How a run
      ended"): ``"exited"``, ``"signaled"``, ``"timeout"``, ``"cancelled"``,
      ``"oom"`` or ``"failed"`` (the last only on CleanupError's result, or
      when bash's status was never learned); expect further words
      (``"idle"``, ``"needs_input"``) from interactive runs. None from a
      shellsup too old to say.
    - ``cancel_reason``: why the run was cancelled (``"request"``,
      ``"signal"``, ``"parent-gone"``, ``"protocol"``), or None.
    - ``cleanup``: what cleanup did, a dict with ``tier``, ``trigger``,
      ``signalled``, ``killed``, ``reaped``, ``rounds``, ``stragglers``,
      ``ms``, ``drainTimedOut`` and ``stragglersOmitted``. ``stragglers`` lists processes that could
      not be killed; it is empty when nothing survived.
    - ``sandbox``: what the sandbox enforced (sandbox=, network=False), a
      dict with ``mode``, ``writable``, ``network`` (``"host"``,
      ``"loopback"`` or ``"none"``), ``via`` and ``tmpDir``; None without
      one (docs/sandbox.md).
    - ``streams``: what became of each stream's bytes on their way to text,
      ``{"stdout": {...}, "stderr": {...}}``, each with ``lossyBytes`` (raw
      bytes that became U+FFFD), ``binary`` (a NUL byte, or more than 819
      bytes, 10% of 8 KiB, of the first 8 KiB lost) and ``tidiedBytes`` (with tidy=True, the bytes
      the tidier took out less those it put in; docs/tidy.md).
    """

    def __init__(
        self,
        data: Mapping[str, Any] = (),  # type: ignore[assignment]
        *,
        cancel_reason: Optional[str] = None,
        cleanup: Optional[Dict[str, Any]] = None,
        status: Optional[str] = None,
        sandbox: Optional[Dict[str, Any]] = None,
        streams: Optional[Dict[str, Dict[str, Any]]] = None,
    ) -> None:
        super().__init__(data)
        self.status = status
        self.cancel_reason = cancel_reason
        self.cleanup: Dict[str, Any] = dict(cleanup or {})
        self.sandbox: Optional[Dict[str, Any]] = dict(sandbox) if sandbox else None
        self.streams: Dict[str, Dict[str, Any]] = dict(streams or {})
        # Interactive runs (docs/interactive.md): status "idle" or "needs_input"; the prompt with needs_input.
        self.idle = False
        self.needs_input = False
        self.prompt: Optional[str] = None

    def __await__(self) -> Iterator[Any]:
        """``await result`` returns the result at once."""
        return self
        yield  # pragma: no cover - makes this a generator

    def __repr__(self) -> str:
        keys = [k for k in _REPR_ORDER if k in self] + [k for k in self if k not in _REPR_ORDER]
        parts = [f"{key}={_short(self[key])}" for key in keys]
        return f"{type(self).__name__}({', '.join(parts)})"

    def _repr_mimebundle_(self, include=None, exclude=None) -> Dict[str, str]:
        """IPython/Jupyter display: the same text as repr()."""
        return {"text/plain": repr(self)}


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) > _REPR_TEXT:
        return f"{value[:_REPR_TEXT]!r}...<{len(value)} chars>"
    return repr(value)


def from_totals(frame: Mapping[str, Any]) -> SkillResult:
    """Build the result from a totals frame: the 13 keys, in order, and the extras."""
    missing = [key for key in RESULT_KEYS if key not in frame]
    if missing:
        from ._errors import PROTOCOL, ShellsupError

        raise ShellsupError(f"protocol: totals frame from shellsup lacks {', '.join(missing)}", PROTOCOL)
    cleanup = frame.get("cleanup")
    status = frame.get("status")
    result = SkillResult(
        {key: frame[key] for key in RESULT_KEYS},
        cancel_reason=frame.get("cancelReason") or None,
        cleanup=cleanup if isinstance(cleanup, dict) else {},
        status=status if isinstance(status, str) else None,
        sandbox=frame.get("sandbox") if isinstance(frame.get("sandbox"), dict) else None,
        streams=_streams(frame),
    )
    _annotate(result, frame)
    return result


def _annotate(result: SkillResult, totals: Mapping[str, Any]) -> None:
    """The totals' interactive fields as the result's attributes: idle, needs_input and prompt (result.status
    says "idle" or "needs_input" then; docs/interactive.md)."""
    result.idle = totals.get("idle") is True
    result.needs_input = totals.get("needsInput") is True
    prompt = totals.get("prompt")
    result.prompt = prompt if isinstance(prompt, str) else None


def _streams(frame: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The per-stream text accounting of a totals frame (stdoutLossyBytes, …)."""
    return {
        name: {
            "lossyBytes": frame.get(name + "LossyBytes", 0),
            "binary": frame.get(name + "Binary", False),
            "tidiedBytes": frame.get(name + "TidiedBytes", 0),
        }
        for name in ("stdout", "stderr")
    }
