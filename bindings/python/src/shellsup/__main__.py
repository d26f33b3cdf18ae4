"""``python -m shellsup ARGS``: run the shellsup binary this package would use."""

import os
import sys

from ._find import find_binary


def main() -> None:
    binary = find_binary()
    # exec, so that signals and the exit status pass straight through.
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
