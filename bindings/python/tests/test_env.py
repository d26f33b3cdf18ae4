"""The shell, environment and output options: no_login, scrub_env, agent_env, workspace
(through the real binary), and redact, redact_patterns, spill, spill_max, capture (passed
through as shellsup's flags)."""

import asyncio
import os
import sys

import pytest

import shellsup as shell
from shellsup import _validate


def run(command, **kw):
    return shell.run(command, progress=None, **kw)


def run_async(command, **kw):
    return asyncio.run(shell.run_async(command, progress=None, **kw))


DRIVERS = [pytest.param(run, id="run"), pytest.param(run_async, id="run_async")]


@pytest.fixture
def profile_home(tmp_path):
    """A HOME whose every startup file appends its name to HOME/ran when bash reads it."""
    home = tmp_path / "home"
    home.mkdir()
    ran = home / "ran"
    for name in (".profile", ".bash_profile", ".bash_login", ".bashrc"):
        (home / name).write_text(f"echo {name} >> '{ran}'\n")
    return home, lambda: ran.read_text() if ran.exists() else ""


@pytest.mark.parametrize("driver", DRIVERS)
def test_no_login_reads_no_profile(driver, profile_home, monkeypatch):
    home, ran = profile_home
    monkeypatch.setenv("HOME", str(home))
    result = driver("shopt -q login_shell && echo login || echo plain")
    assert (result["stdout"], ran()) == ("login\n", ".bash_profile\n"), "the default is a login shell"
    (home / "ran").unlink()
    monkeypatch.setenv("SSH_CLIENT", "10.0.0.1 5555 22")  # Debian's bash reads ~/.bashrc for sshd
    monkeypatch.setenv("SHLVL", "0")
    result = driver("shopt -q login_shell && echo login || echo plain", no_login=True)
    assert (result["stdout"], ran()) == ("plain\n", "")


@pytest.mark.parametrize("driver", DRIVERS)
def test_env_without_home_gets_nonexistent(driver):
    env = {k: v for k, v in os.environ.items() if k != "HOME"}
    result = driver('echo "$HOME"; echo ~', env=env)
    assert result["stdout"] == "/nonexistent\n/nonexistent\n"
    assert result["stderr"] == ""


@pytest.mark.parametrize("driver", DRIVERS)
def test_scrub_env_and_agent_env(driver, monkeypatch):
    for kv in ("GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=s", "OPENAI_API_KEY=sk", "KEEP_ME=1", "PAGER=less", "TERM=xterm"):
        name, value = kv.split("=", 1)
        monkeypatch.setenv(name, value)
    probe = ('echo "token=${GITHUB_TOKEN-unset} aws=${AWS_SECRET_ACCESS_KEY-unset} openai=${OPENAI_API_KEY-unset} '
             'keep=$KEEP_ME pager=$PAGER color=${NO_COLOR-unset} term=$TERM"')
    assert driver(probe)["stdout"] == "token=ghp_x aws=s openai=sk keep=1 pager=less color=unset term=xterm\n"
    assert driver(probe, scrub_env=True)["stdout"] == "token=unset aws=unset openai=unset keep=1 pager=less color=unset term=xterm\n"
    assert driver(probe, agent_env=True)["stdout"] == "token=ghp_x aws=s openai=sk keep=1 pager=cat color=1 term=dumb\n"
    assert driver(probe, scrub_env=True, agent_env=True, env=dict(os.environ))["stdout"] == \
        "token=unset aws=unset openai=unset keep=1 pager=cat color=1 term=dumb\n"


@pytest.mark.parametrize("driver", DRIVERS)
def test_env_allow(driver, monkeypatch):
    """Only the named variables (exact or PREFIX*) and the base pass; with scrub_env an
    exactly named one passes, one passed by a prefix does not; agent_env adds after."""
    for kv in ("KEEP=1", "DROP=2", "MY_X=3", "GITHUB_TOKEN=g", "AWS_REGION=r", "LANG=C.UTF-8", "PAGER=less"):
        name, value = kv.split("=", 1)
        monkeypatch.setenv(name, value)
    probe = ('echo "keep=${KEEP-unset} drop=${DROP-unset} my=${MY_X-unset} lang=${LANG-unset} '
             'tok=${GITHUB_TOKEN-unset} aws=${AWS_REGION-unset} pager=$PAGER"')
    allow = ["KEEP", "MY_*", "GITHUB_TOKEN", "AWS_*", "SHELLSUP_LEAK_TOKEN"]
    assert driver(probe, no_login=True)["stdout"] == "keep=1 drop=2 my=3 lang=C.UTF-8 tok=g aws=r pager=less\n"
    assert driver(probe, no_login=True, env_allow=allow)["stdout"] == \
        "keep=1 drop=unset my=3 lang=C.UTF-8 tok=g aws=r pager=\n"
    assert driver(probe, no_login=True, env_allow=tuple(allow), scrub_env=True, agent_env=True)["stdout"] == \
        "keep=1 drop=unset my=3 lang=C.UTF-8 tok=g aws=unset pager=cat\n"
    assert driver("env -0", no_login=True, env_allow=[])["stdout"].count("DROP=2") == 1, "[] is no allow-list"


def test_env_allow_in_a_job(monkeypatch):
    monkeypatch.setenv("KEEP", "1")
    monkeypatch.setenv("DROP", "2")
    with shell.start('echo "keep=${KEEP-unset} drop=${DROP-unset}"', no_login=True,
                     env_allow=["KEEP", "SHELLSUP_LEAK_TOKEN"]) as job:
        assert job.wait(timeout=30)["stdout"] == "keep=1 drop=unset\n"


def test_env_allow_refused_by_start(no_spawn):
    with pytest.raises(shell.ShellsupError) as exc:
        shell.start("echo never", env_allow=["A=B"])
    assert exc.value.category == "validation"
    assert '(got "A=B")' in str(exc.value)


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path.resolve()
    ws, outside = root / "ws", root / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "in").symlink_to(ws / "sub")
    (ws / "out").symlink_to(outside)
    return ws


@pytest.mark.parametrize("driver", DRIVERS)
def test_workspace_accepts_inside(driver, workspace):
    result = driver("pwd", workspace=workspace)
    assert (result["cwd"], result["stdout"]) == (str(workspace), f"{workspace}\n"), "cwd None means the workspace"
    result = driver("pwd -P", workspace=str(workspace), cwd=workspace / "in")
    assert (result["cwd"], result["stdout"]) == (str(workspace / "in"), f"{workspace / 'sub'}\n")


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("where", ["out", "sub/../.."])
def test_workspace_refuses_escapes(driver, workspace, tmp_path, where):
    marker = tmp_path / "spawned"
    cwd = os.path.normpath(workspace / where)
    with pytest.raises(shell.ShellsupError) as exc:
        driver(f"touch '{marker}'", workspace=workspace, cwd=workspace / where)
    assert exc.value.category == "validation"
    assert f'cwd "{cwd}" resolves to' in str(exc.value)
    assert f'outside workspace "{workspace}"' in str(exc.value)
    assert not marker.exists()


PRIVATE = object()  # stands for a private (0700) spill directory, made by the test

ROWS = [
    ("no_login-int", dict(no_login=1), "no_login must be True or False (got 1 of type int)"),
    ("scrub_env-str", dict(scrub_env="yes"), 'scrub_env must be True or False (got "yes" of type str)'),
    ("agent_env-none", dict(agent_env=None), "agent_env must be True or False (got None of type NoneType)"),
    ("redact-int", dict(redact=0), "redact must be True or False (got 0 of type int)"),
    ("workspace-missing", dict(workspace="/nonexistent/ws"), 'workspace "/nonexistent/ws" does not exist'),
    ("workspace-file", dict(workspace="/etc/passwd"), 'workspace "/etc/passwd" is not a directory'),
    ("workspace-int", dict(workspace=3), "workspace must be a path or None (got 3 of type int)"),
    ("workspace-empty", dict(workspace=""), 'workspace must be a directory path or None (got "")'),
    ("redact_patterns-str", dict(redact_patterns="AKIA"),
     'redact_patterns must be a list of regular expressions (strings) or None (got "AKIA" of type str)'),
    ("redact_patterns-empty", dict(redact_patterns=["ok", ""]), 'redact_patterns[1] must be a non-empty string (got "")'),
    ("redact_patterns-bytes", dict(redact_patterns=[b"x"]), "redact_patterns[0] must be a non-empty string (got b'x' of type bytes)"),
    ("redact_patterns-nul", dict(redact_patterns=["a\0"]), "redact_patterns[0] must not contain a NUL byte"),
    # run() and start() check spill= alike now, in shellsup's words ("spill directory ..."),
    # where run() once said 'spill "..." does not exist' and left the rest to the binary.
    ("spill-missing", dict(spill="/nonexistent/spill"), 'spill directory "/nonexistent/spill" does not exist'),
    ("spill-file", dict(spill="/etc/passwd"), 'spill directory "/etc/passwd" is not a directory'),
    ("spill-world-writable", dict(spill="/tmp"), 'spill directory "/tmp" is writable by group or others (mode 1777)'),
    ("spill-int", dict(spill=3), "spill must be a path or None (got 3 of type int)"),
    # spill_max=0 and "64M" were refused here once; the binary's rule won (at
    # least 0, "64M"-style strings): test_spill_max_as_the_binary_reads_it.
    ("spill_max-negative", dict(spill=PRIVATE, spill_max=-1),
     "spill_max must be None for shellsup's default (256 MiB) or a byte count, at least 0 and at most 2**62: "
     'a whole number of bytes or a string with a K, M, G or T suffix (powers of 1024), e.g. "64M" (got -1)'),
    ("spill_max-negative-str", dict(spill=PRIVATE, spill_max="-1"), '(got "-1")'),
    ("spill_max-bad-suffix", dict(spill=PRIVATE, spill_max="12X"), '(got "12X")'),
    ("spill_max-too-big", dict(spill=PRIVATE, spill_max=(1 << 62) + 1), "(got 4611686018427387905)"),
    ("spill_max-float", dict(spill=PRIVATE, spill_max=1.5), "(got 1.5 of type float)"),
    ("spill_max-bool", dict(spill=PRIVATE, spill_max=True), "(got True of type bool)"),
    ("spill_max-alone", dict(spill_max=1024), "spill_max (got 1024) needs a spill directory: pass spill= too"),
    ("spill_max-alone-str", dict(spill_max="64M"), 'spill_max (got "64M") needs a spill directory: pass spill= too'),
    ("capture-bad", dict(capture="middle"), 'capture must be "head", "tail" or "head+tail", or None for "head" (got "middle")'),
    ("capture-case", dict(capture="Tail"), '(got "Tail")'),
    ("env_allow-str", dict(env_allow="PATH"),
     'env_allow must be a list of variable names (strings) or None (got "PATH" of type str)'),
    ("env_allow-empty", dict(env_allow=["A", ""]), 'env_allow[1] must be a variable name, or a prefix ending in * (e.g. MY_VAR, LC_*), without =, commas, whitespace, control characters or NUL bytes (got "")'),
    ("env_allow-eq", dict(env_allow=["A=1"]), '(got "A=1")'),
    ("env_allow-comma", dict(env_allow=["A,B"]), '(got "A,B")'),
    ("env_allow-space", dict(env_allow=["A B"]), '(got "A B")'),
    ("env_allow-nul", dict(env_allow=["A\0"]), "env_allow[0] must be"),
    ("env_allow-nbsp", dict(env_allow=["A\xa0B"]), "env_allow[0] must be"),
    ("env_allow-star", dict(env_allow=["*"]), '* only at the end of a prefix (got "*")'),
    ("env_allow-mid-star", dict(env_allow=["A*B"]), '* only at the end of a prefix (got "A*B")'),
    ("env_allow-bytes", dict(env_allow=[b"A"]), "(got b'A' of type bytes)"),
]


@pytest.mark.parametrize("kwargs,message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_refused_before_spawn(no_spawn, tmp_path, kwargs, message):
    if kwargs.get("spill") is PRIVATE:
        private = tmp_path / "private"
        private.mkdir(mode=0o700, exist_ok=True)
        kwargs = dict(kwargs, spill=private)
    for call in (lambda: shell.run("echo never", **kwargs), lambda: asyncio.run(shell.run_async("echo never", **kwargs))):
        with pytest.raises(shell.ShellsupError) as exc:
            call()
        assert exc.value.category == "validation"
        assert message in str(exc.value)


def _spill_file(spill):
    """The stdout spill file of the one run that spilled into spill."""
    runs = [d for d in spill.iterdir() if d.name.startswith("shellsup-")]
    assert len(runs) == 1, runs
    return (runs[0] / "stdout").read_bytes()


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("spill_max, kept", [
    ("64M", b"hello\n"), ("1T", b"hello\n"), ("64MiB", b"hello\n"), ("4", b"hell"), (0, b""), ("0K", b""), (None, b"hello\n"),
])
def test_spill_max_as_the_binary_reads_it(driver, tmp_path, spill_max, kept):
    """spill_max takes what shellsup's --spill-max takes: "64M"-style strings with
    K, M, G or T (and B or iB), and 0, which keeps no byte; the file shows the
    limit reached the binary."""
    spill = tmp_path / "spill"
    spill.mkdir(mode=0o700)
    result = driver("echo hello", spill=spill, spill_max=spill_max)
    assert (result["exitCode"], result["stdout"]) == (0, "hello\n")
    assert _spill_file(spill) == kept


def test_options_become_flags(tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    req = _validate.request("-x", str(tmp_path), None, None, None, None, no_login=True, scrub_env=True, agent_env=True,
                            env_allow=["A", "LC_*"], workspace=tmp_path, redact_patterns=["-tok_[a-z]+", "a=b"], spill=spill,
                            spill_max=64 << 20, capture="head+tail")
    argv = req.argv("shellsup")
    assert argv[argv.index("--budget") + 2:] == [
        "--pidns-auto", "--no-login", "--scrub-env", "--agent-env", "--env-allow=A,LC_*", f"--workspace={tmp_path}", "--redact",
        "--redact-pattern=-tok_[a-z]+", "--redact-pattern=a=b", f"--spill={spill}", "--spill-max=67108864",
        "--capture=head+tail", "--", "-x"]
    plain = _validate.request("true", None, None, None, None, None).argv("shellsup")
    assert plain[plain.index("--budget") + 2:] == ["--pidns-auto", "--", "true"], "no option, no flag but the default's"
    for pidns, flags in ((True, ["--pidns"]), (False, [])):
        argv = _validate.request("true", None, None, None, None, None, pidns=pidns).argv("shellsup")
        assert argv[argv.index("--budget") + 2:] == flags + ["--", "true"], pidns
    assert _validate.request("true", None, None, None, None, None, redact=True, capture="tail").argv("x")[-4:] == \
        ["--redact", "--capture=tail", "--", "true"]


def test_options_reach_the_binary(tmp_path, monkeypatch):
    """run() hands the flags to the binary it runs: a stand-in records its argv."""
    log = tmp_path / "argv"
    fake = tmp_path / "fake-shellsup"
    # the binding runs "shellsup sweep" after a binary that died before its start
    # frame: the stand-in answers it as shellsup would
    fake.write_text(f"#!{sys.executable}\nimport sys\n"
                    f"if sys.argv[1:] == ['sweep']: print('shellsup: sweep: no stale leaves'); sys.exit(0)\n"
                    f"open({str(log)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SHELLSUP_BIN", str(fake))
    with pytest.raises(shell.ShellsupError):
        run("true", no_login=True, redact_patterns=["AKIA[0-9A-Z]{16}"], capture="tail")
    argv = log.read_text().split("\n")
    assert argv[-6:] == ["--no-login", "--redact", "--redact-pattern=AKIA[0-9A-Z]{16}", "--capture=tail", "--", "true"]
