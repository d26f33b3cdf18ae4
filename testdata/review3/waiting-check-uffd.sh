#!/bin/bash
# Review 3 (held): a root command blocks in ppoll() whose poll array lies in
# a userfaultfd-registered page nobody serves (uffd-ppoll.c), so that the
# waiting check's read of /proc/PID/mem at that address faults into the
# same userfaultfd. Checks that --idle-timeout still fires (the quiet
# watch is not hung) and that --stop-on-input does not hang either.
# Needs root (full userfaultfd) and gcc.
set -u
SHELLSUP=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
D=$(mktemp -d /tmp/rv3-uffd.XXXXXX); trap 'rm -rf "$D"' EXIT
gcc -O2 -o "$D/uffd" "$(dirname "$0")/uffd-ppoll.c" || exit 2
for extra in "" --pidns; do
  echo "== --idle-timeout 2 --timeout 8 $extra"
  HOME=/tmp timeout 30 "$SHELLSUP" --no-login --pty --idle-timeout 2 --timeout 8 $extra -- "$D/uffd" 2>&1 | tail -1
  echo "== --stop-on-input --timeout 8 $extra"
  HOME=/tmp timeout 30 "$SHELLSUP" --no-login --pty --stop-on-input --timeout 8 $extra -- "$D/uffd" 2>&1 | tail -1
done
