"""Review 3, finding 1 through the Python binding's defaults.

As nobody, ``shell.run(cmd, network=False)`` (the default ``--pidns-auto``)
runs the command in a PID namespace (``/proc/1`` is ``shellsup-init``) but
plans the network without it: ``network: "none"``, ``via: "landlock-tcp"``,
and an MPTCP socket reaches the host's 127.0.0.1 listener.

Usage (root, from the worktree; bounded by the outer timeout):
  timeout 60 python3 testdata/review3/landlock-tcp-bypass-binding.py
It starts its own listener, runs the binding as nobody and cleans up.
"""
import os, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
if os.environ.get("RV3_CHILD") != "1":
    port = 20000 + os.getpid() % 20000
    d = tempfile.mkdtemp(prefix="rv3-bind.")
    os.chmod(d, 0o755)
    srv = subprocess.Popen(["timeout", "50", "/usr/bin/python3", "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                           cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        env = dict(os.environ, RV3_CHILD="1", HOME=d, SHELLSUP_BIN=os.path.join(root, "bin/shellsup"))
        r = subprocess.run(["timeout", "40", "setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups",
                            "/usr/bin/python3", os.path.abspath(__file__), str(port)], env=env, cwd=d)
        sys.exit(r.returncode)
    finally:
        srv.kill(); srv.wait()
        subprocess.run(["rm", "-rf", d])
sys.path.insert(0, os.path.join(root, "bindings/python/src"))
import shellsup as shell  # noqa: E402
probe = ("cat /proc/1/comm; /usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262);"
         " s.settimeout(3); s.connect((\"127.0.0.1\", %s)); s.sendall(b\"GET / HTTP/1.0\\r\\n\\r\\n\"); print(\"MPTCP:\", s.recv(17))' 2>&1 | tail -1" % sys.argv[1])
r = shell.run(probe, timeout=20, network=False)
print("sandbox:", r.sandbox)
print(r["stdout"], end="")
broken = "200 OK" in r["stdout"]
print("BROKEN" if broken else "held")
sys.exit(1 if broken else 0)
