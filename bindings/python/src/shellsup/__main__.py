"""``python -m shellsup ARGS``, and the ``shellsup`` console command: run the binary.

Both exec the shellsup binary this package would use (see find_binary), so
signals and the exit status pass straight through. Without a binary they
print the places they looked, one line per place, and exit 127 (the shell's
"command not found").
"""

import os
import sys

from ._errors import ShellsupError
from ._find import find_binary

EXIT_NOT_FOUND = 127
EXIT_CANNOT_EXEC = 126


def main() -> None:
    try:
        binary = find_binary()
    except ShellsupError as err:
        places = getattr(err, "places", None) or [str(err)]
        lines = ["shellsup: no shellsup binary found; looked at:"] + [f"  {p}" for p in places]
        lines.append("install the platform wheel, put shellsup on PATH, or set SHELLSUP_BIN")
        print("\n".join(lines), file=sys.stderr)
        sys.exit(EXIT_NOT_FOUND)
    try:
        os.execv(binary, [binary, *sys.argv[1:]])
    except OSError as err:
        print(f"shellsup: cannot execute {binary}: {err.strerror}", file=sys.stderr)
        sys.exit(EXIT_CANNOT_EXEC)


if __name__ == "__main__":
    main()
