"""sandbox=, protect=, network=: the opt-in sandbox (shellsup --sandbox, --protect, --no-network)."""

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest

import shellsup as shell


@pytest.mark.parametrize("kwargs, shown", [
    ({"sandbox": "full"}, 'sandbox must be one of read-only, workspace-write, none, or None (got "full")'),
    ({"sandbox": "workspace-write"}, "sandbox workspace-write needs --workspace DIR"),
    ({"sandbox": "read-only", "protect": [".git"]}, "needs --sandbox workspace-write (got --sandbox read-only)"),
    ({"sandbox": "workspace-write", "workspace": "/tmp", "protect": ".git"}, 'protect must be a list of directories or None (got ".git")'),
    ({"sandbox": "workspace-write", "workspace": "/tmp", "protect": [1]}, "protect entries must be paths (got 1 of type int)"),
    ({"network": 0}, "network must be True or False (got 0 of type int)"),
])
def test_sandbox_validated_before_spawning(kwargs, shown, no_spawn):
    for call in (lambda: shell.run("true", progress=None, **kwargs),
                 lambda: asyncio.run(shell.run_async("true", progress=None, **kwargs)),
                 lambda: shell.start("true", **kwargs)):
        with pytest.raises(shell.ShellsupError) as e:
            call()
        assert e.value.category == "validation"
        assert shown in str(e.value)


def _listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    s.setblocking(False)
    return s


def _probe(outside, port):
    return (f"echo x > {outside}/x 2>/dev/null || echo denied-outside\n"
            "echo x > in && echo wrote-inside\n"
            'echo t > "$TMPDIR/t" && echo wrote-tmp\n'
            f"{{ env > /dev/tcp/127.0.0.1/{port}; }} 2>/dev/null || echo no-host-network\n")


WANT = "denied-outside\nwrote-inside\nwrote-tmp\nno-host-network\n"


def test_sandbox_run(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    lst = _listener()
    try:
        r = shell.run(_probe(outside, lst.getsockname()[1]), progress=None, no_login=True,
                      sandbox="workspace-write", workspace=ws, network=False)
        with pytest.raises(BlockingIOError):
            lst.accept()  # nothing reached the host's listener
    finally:
        lst.close()
    assert r["stdout"] == WANT
    assert r.sandbox["mode"] == "workspace-write"
    assert r.sandbox["writable"][0] == str(ws)
    assert r.sandbox["network"] in ("loopback", "none")
    assert not os.path.exists(r.sandbox["tmpDir"])
    assert r.cleanup["tmpRemoved"] >= 2
    assert not (outside / "x").exists()


def test_sandbox_job(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    lst = _listener()
    try:
        job = shell.start("setsid sleep 300 </dev/null >/dev/null 2>&1 &\n" + _probe(outside, lst.getsockname()[1]),
                          no_login=True, sandbox="workspace-write", workspace=ws, network=False)
        try:
            r = job.wait(timeout=30)
        finally:
            job.close()
    finally:
        lst.close()
    assert r["stdout"] == WANT
    assert r.cleanup["signalled"] >= 1
    assert r.cleanup["stragglers"] == []
    assert not os.path.exists(r.sandbox["tmpDir"])


def test_no_sandbox_reports_none():
    assert shell.run("true", progress=None).sandbox is None


def test_sandbox_protect(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    r = shell.run("echo x > .git/config 2>/dev/null || echo git-denied; echo x > src/a && echo src-ok", progress=None,
                  no_login=True, sandbox="workspace-write", workspace=tmp_path, protect=[".git"])
    assert r["stdout"] == "git-denied\nsrc-ok\n"
    assert str(tmp_path / "src") in r.sandbox["writable"]


# As nobody, in a child Python: the host's listener through a plain connect,
# a Multipath TCP socket and a TCP Fast Open sendto (the last two pass beside
# Landlock's TCP rules without shellsup's seccomp filter).
TCP_PROBE = """python3 -c 'import socket; socket.create_connection(("127.0.0.1", {port}), timeout=2)' 2>/dev/null; echo "tcp rc=$?"
python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(2); s.connect(("127.0.0.1", {port}))' 2>/dev/null; echo "mptcp rc=$?"
python3 -c 'import socket; s = socket.socket(); s.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", {port}))' 2>/dev/null; echo "fastopen rc=$?"
"""

NOBODY_HARNESS = r"""
import json, sys
import shellsup as shell
pidns = json.loads(sys.argv[2])
r = shell.run(sys.argv[1], progress=None, no_login=True, network=False, pidns=pidns)
print(json.dumps({"stdout": r["stdout"], "sandbox": r.sandbox}))
"""


@pytest.mark.parametrize("pidns, network, via", [
    (None, "loopback", "netns"),  # the default, --pidns-auto: a PID namespace here, and a network namespace with it
    (False, "none", "landlock-tcp+landlock-scope"),
])
def test_network_false_as_nobody(pidns, network, via, child_env):
    """Review 2026-12-02, finding 1: as nobody, network=False with the default pidns got the
    Landlock TCP rules, and MPTCP and TCP Fast Open reached the host's 127.0.0.1. Now the default
    gets a network namespace, and pidns=False the TCP rules with the seccomp filter beside them."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to act as nobody")
    top = tempfile.mkdtemp(prefix="shellsup-netnobody-")
    lst = _listener()
    try:
        os.chmod(top, 0o755)
        probe = TCP_PROBE.format(port=lst.getsockname()[1])
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               sys.executable, "-c", NOBODY_HARNESS, probe, json.dumps(pidns)],
                              env=dict(child_env, HOME=top), cwd=top, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout.strip().splitlines()[-1])
        with pytest.raises(BlockingIOError):
            lst.accept()  # nothing reached the host's listener
    finally:
        lst.close()
        shutil.rmtree(top, ignore_errors=True)
    assert out["stdout"] == "tcp rc=1\nmptcp rc=1\nfastopen rc=1\n", out
    assert (out["sandbox"]["network"], out["sandbox"]["via"]) == (network, via), out
