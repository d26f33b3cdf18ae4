"""user=: the command runs as another user (shellsup --user USER[:GROUP])."""

import asyncio
import os
import pwd
import shutil
import subprocess

import pytest

import shellsup as shell

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="--user needs shellsup to run as root")


def _nobody():
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("this host has no user nobody")


FORM = "user must be USER or USER:GROUP, each a name or a numeric id (e.g. nobody, 65534, nobody:nogroup)"


@pytest.mark.parametrize("bad, shown", [
    ("", f'{FORM} (got "")'),
    ("a:b:c", f'{FORM} (got "a:b:c")'),
    ("nobody:", f'{FORM} (got "nobody:")'),
    (":nogroup", f'{FORM} (got ":nogroup")'),
    ("no body", f'{FORM}, without whitespace, control characters or NUL bytes (got "no body")'),
    ("nobody\0", "without whitespace, control characters or NUL bytes"),
    (65534, f"{FORM}, or None (got 65534 of type int)"),
])
def test_user_validated_before_spawning(bad, shown, no_spawn):
    for call in (lambda: shell.run("true", user=bad, progress=None),
                 lambda: asyncio.run(shell.run_async("true", user=bad, progress=None)),
                 lambda: shell.start("true", user=bad)):
        with pytest.raises(shell.ShellsupError) as e:
            call()
        assert e.value.category == "validation"
        assert shown in str(e.value)


def test_unknown_user_refused_by_shellsup():
    with pytest.raises(shell.ShellsupError) as e:
        shell.run("echo ran", user="no-such-user-xyz", progress=None)
    assert e.value.category == "validation"
    assert 'user "no-such-user-xyz": no user "no-such-user-xyz" in /etc/passwd' in str(e.value)


CHECK = ("setsid sleep 300 </dev/null >/dev/null 2>&1 & id -u; echo \"$HOME $USER\"; "
         "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status; kill -0 $PPID 2>/dev/null && echo signalled shellsup; "
         "cat /proc/{harness}/environ >/dev/null 2>&1 && echo read the harness environment; true")


@needs_root
def test_run_as_nobody():
    pw = _nobody()
    home = pw.pw_dir or "/nonexistent"
    want = f"{pw.pw_uid}\n{home} nobody\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n"
    command = CHECK.format(harness=os.getpid())
    result = shell.run(command, cwd="/", user="nobody", progress=None)
    assert result["stdout"] == want, result["stderr"]
    result = asyncio.run(shell.run_async(command, cwd="/", user="nobody", progress=None))
    assert result["stdout"] == want, result["stderr"]
    with shell.start(command, cwd="/", user="nobody") as job:
        result = job.wait()
    assert result["stdout"] == want, result["stderr"]


@needs_root
def test_user_refused_when_shellsup_may_not(child_env, tmp_path):
    """A harness running as nobody gets containment_unavailable, and nothing runs."""
    _nobody()
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv")
    marker = tmp_path / "spawned"
    tmp_path.chmod(0o777)
    script = ("import shellsup as shell\n"
              "try:\n"
              f"    shell.run('touch {marker}', cwd='/', user='root', progress=None)\n"
              "except shell.ShellsupError as e:\n"
              "    print(e.category); print(e)\n")
    env = dict(child_env, HOME="/nonexistent")
    out = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", shell_python(), "-c", script],
                         env=env, cwd="/", capture_output=True, text=True, timeout=60)
    lines = out.stdout.splitlines()
    assert lines and lines[0] == "containment_unavailable", (out.stdout, out.stderr)
    assert "--user root: shellsup must run as root or with CAP_SETUID, CAP_SETGID and CAP_KILL" in out.stdout
    assert not marker.exists()


def shell_python():
    import sys
    return sys.executable
