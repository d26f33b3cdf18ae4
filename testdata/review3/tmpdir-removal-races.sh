#!/bin/bash
# Review 3: the fd-based removal of the private TMPDIR (c7fc16e) against a
# process of the --user uid outside the run that, during the removal,
# keeps renaming directories of the TMPDIR away and swapping links (to a
# root-owned victim tree, mode 0555) and directories in for them; plus a
# hard link into the TMPDIR of a file outside (nobody's), and a tree wider
# and deeper than the walk's bound. Checks the victim tree (modes, files)
# and the outside file after each run. Needs root.
# Usage: tmpdir-removal-races.sh [runs]
set -u
RUNS=${1:-20}
SHELLSUP=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 2; }
D=$(mktemp -d /tmp/rv3-rm.XXXXXX); chmod 755 "$D"
mkdir -p "$D/victim/sub"; for i in 1 2 3; do echo keep > "$D/victim/f$i"; echo keep > "$D/victim/sub/g$i"; done
chmod 555 "$D/victim/sub" "$D/victim"
mkdir "$D/nb"; chown nobody:nogroup "$D/nb"; echo outside > "$D/nb/outside"; chown nobody:nogroup "$D/nb/outside"
ls -d /tmp/shellsup-tmp-* > "$D/before" 2>/dev/null
cat > "$D/swap.py" <<'PY'
import os, sys, time, glob
victim, end = sys.argv[1], time.time() + float(sys.argv[2])
n = 0
while time.time() < end:
    for t in glob.glob("/tmp/shellsup-tmp-*"):
        for root, dirs, files in os.walk(t):
            for d in dirs:
                p = os.path.join(root, d)
                try:
                    os.rename(p, p + ".x"); os.symlink(victim, p); n += 1
                except OSError:
                    pass
PY
cleanup() { [ -n "${APID:-}" ] && kill "$APID" 2>/dev/null; wait 2>/dev/null; chmod -R u+w "$D" 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
timeout 200 setpriv --reuid nobody --regid nogroup --clear-groups /usr/bin/python3 "$D/swap.py" "$D/victim" 150 &
APID=$!
left=0
for i in $(seq "$RUNS"); do
  out=$(HOME=/tmp timeout 30 "$SHELLSUP" --no-login --user nobody --cwd /tmp --sandbox read-only -- "
    for a in \$(seq 30); do mkdir -p \"\$TMPDIR/w\$a/x/y/z\"; echo data > \"\$TMPDIR/w\$a/x/y/z/f\"; chmod 0 \"\$TMPDIR/w\$a/x\"; done
    ln $D/nb/outside \"\$TMPDIR/hardlink\" 2>/dev/null
    d=\$TMPDIR/deep; [ $i = 3 ] && { for k in \$(seq 260); do d=\$d/d; done; mkdir -p \$d; }
    true" 2>&1)
  case $out in *"removing the private TMPDIR"*) left=$((left+1));; esac
done
kill "$APID" 2>/dev/null; wait "$APID" 2>/dev/null; APID=
bad=0
[ "$(stat -c %a "$D/victim")" = 555 ] && [ "$(stat -c %a "$D/victim/sub")" = 555 ] || { echo "victim modes changed: $(stat -c '%a %n' "$D/victim" "$D/victim/sub")"; bad=1; }
[ "$(ls "$D/victim" "$D/victim/sub" | grep -c '^[fg][123]$')" = 6 ] || { echo "victim files removed"; bad=1; }
[ "$(cat "$D/nb/outside")" = outside ] || { echo "outside file lost"; bad=1; }
echo "$RUNS runs ($left reported a TMPDIR not removed); victim $(stat -c %a "$D/victim") with $(find "$D/victim" -type f | wc -l) files; outside file: $(cat "$D/nb/outside" 2>/dev/null)"
# the TMPDIRs this script's runs left (reported by shellsup as not removed): rm -rf, which follows no link
for t in /tmp/shellsup-tmp-*; do [ -d "$t" ] && [ "$(stat -c %U "$t")" = nobody ] && ! grep -qxF "$t" "$D/before" && { echo "left (reported): $t"; chmod -R u+rwx "$t" 2>/dev/null; rm -rf "$t"; }; done
[ $bad = 0 ] && { echo held; exit 0; }; echo BROKEN; exit 1
