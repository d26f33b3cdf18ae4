"""Checking a job's arguments, and the job's request (a run request with spill files always on)."""

from __future__ import annotations

import math
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, List, Optional, Pattern

from ._validate import Request, invalid, quote


@dataclass(frozen=True)
class JobRequest(Request):
    """A run request whose deadline is a lifetime (kind LIFETIME), with a spill directory."""

    spill_dir: str = ""
    spill_max: Optional[int] = None

    def argv(self, binary: str) -> List[str]:
        args = super().argv(binary)
        extra = ["--spill", self.spill_dir]
        if self.spill_max is not None:
            extra += ["--spill-max", str(self.spill_max)]
        end = len(args) - 2  # before "--", command
        return args[:end] + extra + args[end:]


# -- checking a job's arguments ----------------------------------------------------


def check_name(name: Any, command: str) -> str:
    if name is None:
        return command if len(command) <= 60 else command[:57] + "..."
    if not isinstance(name, str) or not name:
        raise invalid(f"name must be a non-empty string or None (got {quote(name)})")
    return name


def check_pattern(pattern: Any, optional: bool = True) -> Optional[Pattern[str]]:
    """A str regular expression (compiled MULTILINE), or None where optional."""
    if pattern is None and optional:
        return None
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise invalid(f"pattern must be a text (str) regular expression (got {quote(pattern.pattern)})")
        return pattern
    if not isinstance(pattern, str) or pattern == "":
        raise invalid(f"pattern must be a non-empty regular expression string{' or None' if optional else ''} (got {quote(pattern)})")
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise invalid(f"pattern {quote(pattern)} is not a valid regular expression: {exc}") from None


def check_port(port: Any) -> Optional[int]:
    if port is None:
        return None
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise invalid(f"port must be a TCP port number from 1 to 65535 or None (got {quote(port)})")
    return port


def check_url(url: Any) -> Optional[str]:
    if url is None:
        return None
    parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid(f"url must be an http:// or https:// URL with a host, or None (got {quote(url)})")
    return url


def check_wait_timeout(timeout: Any, name: str = "timeout") -> Optional[float]:
    if timeout is None:
        return None
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or math.isnan(timeout) or timeout < 0:
        raise invalid(f"{name} must be a number of seconds, at least 0, or None (got {quote(timeout)})")
    return float(timeout)
