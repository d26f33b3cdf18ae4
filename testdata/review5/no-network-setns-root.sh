#!/bin/bash
# Review 5: --no-network for a root command in the default tier (no
# --sandbox, no --pidns). shellsup makes the network namespace for bash
# only, and stays in the host's. shellsup is $PPID, and root opens
# /proc/$PPID/ns/net whatever its dumpability (CAP_SYS_PTRACE), so `nsenter
# --net=/proc/$PPID/ns/net` (setns, CAP_SYS_ADMIN) puts the command back in
# the host's network: it reaches a host listener on 127.0.0.1.
# --sandbox (Landlock refuses ptrace access to processes outside the
# domain: EACCES), --pidns (shellsup has no pid there) and --user nobody
# (EACCES) stop it.
# Usage (root): no-network-setns-root.sh     EXTRA="--sandbox read-only" | "--pidns" | "--user nobody --cwd /tmp"
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
PORT=$((40000 + RANDOM % 20000)); OUT=/tmp/review5-listener.$$
timeout 20 /usr/bin/python3 -c "
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $PORT)); s.listen(5); s.settimeout(15)
try:
    while True:
        c, _ = s.accept(); print('host listener got:', c.recv(100).decode(), flush=True); c.close()
except OSError:
    pass
" > $OUT & L=$!
sleep 0.5
CONNECT='/usr/bin/python3 -c "
import socket, sys
try:
    c = socket.create_connection((\"127.0.0.1\", '$PORT'), timeout=2); c.send(sys.argv[1].encode()); print(sys.argv[1], \"CONNECTED\")
except OSError as e:
    print(sys.argv[1], \"refused:\", e)" '
HOME=/nonexistent timeout 20 "$BIN" --no-login --no-network ${EXTRA:-} -- "
$CONNECT in-the-namespace
nsenter --net=/proc/\$PPID/ns/net $CONNECT via-shellsups-netns 2>&1 | tail -1"
kill $L 2>/dev/null; wait $L 2>/dev/null
cat $OUT; grep -q via-shellsups-netns $OUT && echo BROKEN || echo held; rm -f $OUT
