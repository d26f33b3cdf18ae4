#!/bin/bash
# Review 3: --no-network without a network namespace (network "none", via
# landlock-tcp: nobody without --pidns, root without CAP_SYS_ADMIN) is meant
# to deny every TCP connect and bind. A Multipath-TCP socket
# (socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)) is not covered by Landlock's
# TCP rights (upstream landlock-lsm/linux#54) and talks to any plain TCP
# listener; a TCP Fast Open sendto (MSG_FASTOPEN) connects without
# connect(2) (landlock-lsm/linux#41). The listener is the reviewer's, on
# 127.0.0.1 of the host. Usage: landlock-tcp-bypass.sh [nobody|root-nocap]
set -u
WHO=${1:-nobody}
SHELLSUP=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
D=$(mktemp -d /tmp/rv3-tcp.XXXXXX); chmod 755 "$D"
PORT=$((20000 + RANDOM % 20000))
cat > "$D/probe.py" <<'PY'
import socket, sys
port = int(sys.argv[1]); req = b"GET / HTTP/1.0\r\n\r\n"
def tcp():
    s = socket.socket(); s.settimeout(3); s.connect(("127.0.0.1", port)); s.sendall(req); return s
def mptcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(3)
    s.connect(("127.0.0.1", port)); s.sendall(req); return s
def fastopen():
    s = socket.socket(); s.sendto(req, socket.MSG_FASTOPEN, ("127.0.0.1", port)); s.settimeout(3); return s
def mptcp_bind():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.bind(("127.0.0.1", 0)); s.listen(); return None
for name, f in (("tcp connect", tcp), ("mptcp connect", mptcp), ("tcp fastopen sendto", fastopen), ("mptcp bind+listen", mptcp_bind)):
    try:
        s = f()
        print(name, "-> REACHED" + ((": " + repr(s.recv(17))) if s else ""))
    except OSError as e:
        print(name, "->", e)
PY
cd "$D"
timeout 60 python3 -m http.server "$PORT" --bind 127.0.0.1 >/dev/null 2>&1 & SP=$!
trap 'kill $SP 2>/dev/null; wait 2>/dev/null; rm -rf "$D"' EXIT
sleep 1
case $WHO in
  nobody) RUN=(setpriv --reuid nobody --regid nogroup --clear-groups);;
  root-nocap) RUN=(setpriv --bounding-set -sys_admin --inh-caps -sys_admin);;
esac
OUT=$(HOME=/tmp timeout 30 "${RUN[@]}" "$SHELLSUP" --no-login --no-network ${EXTRA:-} --frames -- "/usr/bin/python3 $D/probe.py $PORT" | /usr/bin/python3 -c '
import sys, struct, msgpack
d = sys.stdin.buffer.read(); i = 0
while i + 4 <= len(d):
    n = struct.unpack(">I", d[i:i+4])[0]; f = msgpack.unpackb(d[i+4:i+4+n], raw=False); i += 4 + n
    if f.get("type") == "start": print("sandbox:", f.get("sandbox"))
    if f.get("type") == "totals": print(f.get("stdout"), end=""); print(f.get("stderr"), end="")
')
echo "$OUT"
case $OUT in *"connect -> REACHED"*|*"sendto -> REACHED"*) echo BROKEN; exit 1;; esac
echo held; exit 0
