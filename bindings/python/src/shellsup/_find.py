"""Finding the shellsup binary.

The places, in order (the first existing executable wins):

1. ``$SHELLSUP_BIN``: an explicit choice. When it is set it must name an
   executable file; a wrong value is an error, not a reason to fall back to
   another binary silently.
2. The binary bundled inside this package (``shellsup/_bin/shellsup``), which
   the platform wheel ships, the way ruff and uv ship theirs.
3. ``shellsup`` on ``$PATH``: a package installed from source without a
   bundled binary, next to a system-wide shellsup. This package's own
   ``shellsup`` console command (a Python script in the environment's
   ``bin/`` that execs the binary found here) is skipped: it is not the
   binary, and running it would look the binary up again. Empty and
   relative ``$PATH`` elements are skipped: they name the current directory
   (or one below it), where anyone who can write there could drop a
   ``shellsup`` that would then run unsupervised.

When none is found, the error lists every place that was looked at; its
``places`` attribute holds them, one string per place.
"""

from __future__ import annotations

import os
from typing import List, Optional

from ._errors import NOT_FOUND, ShellsupError

# The bundled binary, relative to this file: src/shellsup/_bin/shellsup in the
# source tree, site-packages/shellsup/_bin/shellsup once the wheel is installed.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "shellsup")

# What marks the console command that pip writes for this package.
_ENTRY_POINT_MARK = b"shellsup.__main__"


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _is_entry_point(path: str) -> bool:
    """True for this package's console command: a ``#!`` script importing shellsup.__main__."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and _ENTRY_POINT_MARK in head


def _not_found(message: str, places: List[str]) -> ShellsupError:
    err = ShellsupError(message, NOT_FOUND)
    err.places = places  # type: ignore[attr-defined]
    return err


def _on_path(looked: List[str]) -> Optional[str]:
    """The first ``shellsup`` on $PATH that is not this package's console command."""
    path = os.environ.get("PATH", "")
    for directory in path.split(os.pathsep):
        if not os.path.isabs(directory):
            if directory == "" or _is_executable(os.path.join(directory, "shellsup")):
                looked.append(f"{directory!r} on $PATH (skipped: not an absolute directory)")
            continue
        candidate = os.path.join(directory, "shellsup")
        if not _is_executable(candidate):
            continue
        if _is_entry_point(candidate):
            looked.append(f"{candidate} (skipped: the Python console command, not the binary)")
            continue
        return os.path.abspath(candidate)
    looked.append(f"shellsup on $PATH ({path!r})")
    return None


def find_binary() -> str:
    """Return the absolute path of the shellsup binary to run.

    Raises ShellsupError (category ``"not_found"``) naming every place it looked.
    """
    looked: List[str] = []

    # 1. An explicit override, e.g. a freshly built bin/shellsup in a checkout.
    override = os.environ.get("SHELLSUP_BIN")
    if override is not None:
        if _is_executable(override):
            return os.path.abspath(override)
        why = "does not exist" if not os.path.exists(override) else "is not an executable file"
        raise _not_found(
            f"SHELLSUP_BIN={override!r} {why}; unset SHELLSUP_BIN to use the bundled binary or PATH",
            [f"$SHELLSUP_BIN={override!r} ({why})"],
        )
    looked.append("$SHELLSUP_BIN (not set)")

    # 2. The binary shipped inside the platform wheel.
    if _is_executable(BUNDLED):
        return BUNDLED
    looked.append(f"{BUNDLED} (bundled in the package)")

    # 3. PATH, for installs from source that do not bundle the binary.
    on_path = _on_path(looked)
    if on_path is not None:
        return on_path

    raise _not_found(
        "shellsup binary not found; looked at: " + "; ".join(looked)
        + ". Install the platform wheel, put shellsup on PATH, or set SHELLSUP_BIN.",
        looked,
    )
