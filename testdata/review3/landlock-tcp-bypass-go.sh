#!/bin/bash
# Review 3, finding 1 through the Go binding: as nobody, Run with
# Network: new(false) (and --pidns-auto, the default) gets landlock-tcp,
# and an MPTCP socket reaches the host's 127.0.0.1 listener.
# Usage (root, from the worktree): timeout 200 testdata/review3/landlock-tcp-bypass-go.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$(mktemp -d /tmp/rv3-gonet.XXXXXX); chmod 755 "$D"
trap 'kill ${SP:-} 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT
(cd "$ROOT" && CGO_ENABLED=0 HOME=/tmp/eh-review3 go build -trimpath -o "$D/gonet" ./testdata/review3/gonet) || exit 2
PORT=$((20000 + RANDOM % 20000))
(cd "$D" && exec timeout 60 python3 -m http.server "$PORT" --bind 127.0.0.1 >/dev/null 2>&1) & SP=$!
sleep 1
OUT=$(cd "$D" && HOME=$D SHELLSUP_BIN=$ROOT/bin/shellsup timeout 40 setpriv --reuid nobody --regid nogroup --clear-groups "$D/gonet" \
  "/usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(3); s.connect((\"127.0.0.1\", $PORT)); s.sendall(b\"GET / HTTP/1.0\\r\\n\\r\\n\"); print(\"MPTCP:\", s.recv(17))' 2>&1 | tail -1")
echo "$OUT"
case $OUT in *"200 OK"*) echo BROKEN; exit 1;; esac
echo held; exit 0
