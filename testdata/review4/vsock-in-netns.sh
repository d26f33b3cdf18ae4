#!/bin/bash
# Review 4 (a note, not a finding): AF_VSOCK is not network-namespaced, so
# under --no-network (its own network namespace, `lo` only) a command still
# gets vsock sockets; on a VM with a virtio vsock (this host is one) the
# hypervisor's side is reachable that way. This script only binds and
# listens on a local vsock port (no packet leaves the VM: connecting out
# would contact the machinery that runs the VM, which is out of bounds).
# Usage (root): vsock-in-netns.sh
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
PY='/usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
s.bind((socket.VMADDR_CID_ANY, socket.VMADDR_PORT_ANY)); s.listen(1)
print(\"  vsock listener:\", s.getsockname()); s.close()"'
echo "root --no-network --sandbox read-only:"
HOME=/tmp timeout 10 "$BIN" --no-login --quiet --no-network --sandbox read-only -- "$PY"
echo "nobody --pidns --no-network --sandbox read-only:"
cd /tmp && HOME=/tmp timeout 10 setpriv --reuid nobody --regid nogroup --clear-groups "$BIN" --no-login --quiet --pidns --no-network --sandbox read-only -- "$PY"
