#!/bin/bash
# Review 4: the fix of the third review's finding 5 grants ioctl(2) on
# /dev/tty (and three other devices) only. But /dev/tty is whatever terminal
# is the caller's controlling terminal, and a sandboxed bash is a session
# leader without one: opening a terminal that has no session (read-only is
# enough; reading is not handled) makes it bash's controlling terminal, and
# /dev/tty then names it, with ioctl and write granted. A root command so
# types into that terminal with TIOCSTI, and an outside reader runs it.
# The reviewer's stand-in for such a terminal: a pty whose slave is a bash
# started WITHOUT a new session (a harness's pty.openpty + Popen without
# start_new_session; also unused VTs, serial lines).
# Usage (root): [PTY=1] sandbox-ctty-tiocsti.sh [root|nobody]   EXTRA=--pidns, EXTRA="--user nobody --cwd /tmp"
# (nobody: the pty, its bash and shellsup are all nobody's; TIOCSTI on one's
# own controlling terminal needs no capability)
set -u
WHO=${1:-root}; AS=(); [ "$WHO" = nobody ] && AS=(setpriv --reuid nobody --regid nogroup --clear-groups)
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
D=$(mktemp -d /tmp/eh-review4-ctty.XXXXXX); chmod 755 "$D"; [ "$WHO" = nobody ] && chown nobody "$D"
cleanup() { [ -n "${HP:-}" ] && kill "$HP" 2>/dev/null; wait 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
cat > "$D/holder.py" <<'PY'
import os, subprocess, sys, time, select
m, s = os.openpty()
open(sys.argv[1], "w").write(os.ttyname(s))
p = subprocess.Popen(["/bin/bash", "--norc", "--noprofile", "-i"], stdin=s, stdout=s, stderr=s, cwd="/")
end = time.time() + float(sys.argv[2])
while time.time() < end and p.poll() is None:
    if select.select([m], [], [], 0.2)[0]:
        try: os.read(m, 4096)
        except OSError: break
p.kill()
PY
timeout 30 "${AS[@]}" /usr/bin/python3 "$D/holder.py" "$D/tty" 15 & HP=$!
for i in $(seq 50); do [ -s "$D/tty" ] && break; sleep 0.1; done
T=$(cat "$D/tty"); F=$D/made-by-the-outside-bash
echo "sessionless terminal: $T (an interactive bash reads it, outside the sandbox)"
if [ "${PTY:-0}" = 1 ]; then
# --pty: bash has its own terminal; as the session leader (exec), the
# command drops it with TIOCNOTTY (an inherited fd keeps every ioctl), then
# acquires the other terminal as above.
HOME=/tmp timeout 20 "${AS[@]}" "$BIN" --no-login --pty --sandbox read-only ${EXTRA:-} -- "exec /usr/bin/python3 -c '
import fcntl, termios, os, signal
signal.signal(signal.SIGHUP, signal.SIG_IGN)
fcntl.ioctl(0, termios.TIOCNOTTY)
os.close(os.open(\"$T\", os.O_RDONLY))
fd = os.open(\"/dev/tty\", os.O_RDWR)
for c in b\"\\x15touch $F\\n\": fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
print(\"  --pty: pushed through /dev/tty\")'"
else
HOME=/tmp timeout 20 "${AS[@]}" "$BIN" --no-login --sandbox read-only ${EXTRA:-} -- "
touch $F 2>&1 | sed 's/^/  control, direct: /'
exec 3<$T || exit 3
/usr/bin/python3 -c '
import fcntl, termios, os
try:
    fcntl.ioctl(3, termios.TIOCSTI, b\"x\"); print(\"  control: TIOCSTI on $T itself WORKED\")
except OSError as e: print(\"  control: TIOCSTI on $T itself:\", e)
fd = os.open(\"/dev/tty\", os.O_RDWR)
print(\"  /dev/tty is now\", os.ttyname(fd))
for c in b\"\\x15touch $F\\n\": fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
print(\"  pushed through /dev/tty\")'
"
fi
sleep 1
[ -e "$F" ] && { echo "BROKEN: $(stat -c '%U %n' "$F") exists, made outside by what the sandboxed command typed"; exit 1; }
echo held
