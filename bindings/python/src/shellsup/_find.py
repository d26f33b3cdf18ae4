"""Finding the shellsup binary.

The places, in order (the first existing executable wins):

1. ``$SHELLSUP_BIN``: an explicit choice. When it is set it must name an
   executable file; a wrong value is an error, not a reason to fall back to
   another binary silently.
2. The binary bundled inside this package (``shellsup/_bin/shellsup``), which
   the platform wheel ships, the way ruff and uv ship theirs.
3. ``shellsup`` on ``$PATH``: a package installed from source without a
   bundled binary, next to a system-wide shellsup.

When none is found, the error lists every place that was looked at.
"""

from __future__ import annotations

import os
import shutil

from ._errors import NOT_FOUND, ShellsupError

# The bundled binary, relative to this file: src/shellsup/_bin/shellsup in the
# source tree, site-packages/shellsup/_bin/shellsup once the wheel is installed.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "shellsup")


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_binary() -> str:
    """Return the absolute path of the shellsup binary to run.

    Raises ShellsupError (category ``"not_found"``) naming every place it looked.
    """
    looked = []

    # 1. An explicit override, e.g. a freshly built bin/shellsup in a checkout.
    override = os.environ.get("SHELLSUP_BIN")
    if override is not None:
        if _is_executable(override):
            return os.path.abspath(override)
        why = "does not exist" if not os.path.exists(override) else "is not an executable file"
        raise ShellsupError(
            f"SHELLSUP_BIN={override!r} {why}; unset SHELLSUP_BIN to use the bundled binary or PATH",
            NOT_FOUND,
        )
    looked.append("$SHELLSUP_BIN (not set)")

    # 2. The binary shipped inside the platform wheel.
    if _is_executable(BUNDLED):
        return BUNDLED
    looked.append(f"{BUNDLED} (bundled in the package)")

    # 3. PATH, for installs from source that do not bundle the binary.
    on_path = shutil.which("shellsup")
    if on_path is not None:
        return os.path.abspath(on_path)
    looked.append(f"shellsup on $PATH ({os.environ.get('PATH', '')!r})")

    raise ShellsupError(
        "shellsup binary not found; looked at: " + "; ".join(looked)
        + ". Install the platform wheel, put shellsup on PATH, or set SHELLSUP_BIN.",
        NOT_FOUND,
    )
