#!/bin/bash
# Review 6: a root command under --no-network reaches a host listener by
# moving one end of a veth pair into the host's network namespace. rtnetlink
# names that namespace by pid (`ip link add ... peer ... netns $PPID`,
# IFLA_NET_NS_PID; rtnl_link_get_net_capable asks for CAP_NET_ADMIN over it,
# and no ptrace access check, so the Landlock domain does not see it), and
# has the kernel bring that end up as it makes it there (ifi_flags IFF_UP of
# the new link: rtnl_configure_link). IPv6 link-local addresses
# appear on both ends; the command connects to a host listener on [::].
# A veth end r6b exists in the host namespace for the run's few seconds (it
# goes with the command's namespace; the script deletes it too).
# Usage (root): no-network-veth-into-host.sh    EXTRA="--pidns" (pid 1 is then
# the init, itself in the new namespace: use HOSTPID=... ), EXTRA="--sandbox read-only",
# EXTRA="--user nobody --cwd /tmp" (held: EPERM).
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
PORT=${PORT:-47616}
timeout 25 /usr/bin/python3 -c "
import socket, sys
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('::', $PORT)); s.listen(1); s.settimeout(20)
c, a = s.accept(); print('host listener got:', c.recv(100).decode(), 'from', a[0], flush=True)
" & L=$!
sleep 0.5
CMD='
python3 - <<PY
import socket, struct, os, time, subprocess
# the host end is the new link itself, made in the host namespace (named by pid) and up from birth
print(subprocess.run("ip link add r6b address 02:00:00:00:06:0b netns $PPID up type veth peer name r6a", shell=True, capture_output=True, text=True))
print(subprocess.run("ip link set r6a up; ip -d link show r6a | head -2", shell=True, capture_output=True, text=True).stdout)
time.sleep(3)  # DAD of the link-local addresses
try:
    s = socket.create_connection(("fe80::ff:fe00:60b%r6a", '$PORT'), timeout=3)
    s.send(b"from-inside-no-network"); print("CONNECTED: BROKEN"); s.close()
except OSError as e:
    print("connect:", e, "(held)")
PY'
timeout 20 "$BIN" --no-login --no-network ${EXTRA:-} -- "$CMD"; echo "rc=$?"
ip link del r6b 2>/dev/null && echo "removed r6b from the host namespace"
sleep 0.3; kill $L 2>/dev/null; wait $L 2>/dev/null
ip -br link | grep -q r6 && echo "WARNING: r6 link left" || true
