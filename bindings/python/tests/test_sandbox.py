"""sandbox=, protect=, network=: the opt-in sandbox (shellsup --sandbox, --protect, --no-network)."""

import asyncio
import os
import socket

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
