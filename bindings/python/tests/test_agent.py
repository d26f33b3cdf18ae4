"""agent=True: one switch for an agent harness's defaults, through the real binary."""

import asyncio
import shutil

import pytest

import shellsup as shell
from shellsup import _validate

PROBE = ('echo "$GCM_INTERACTIVE $PYTHONUNBUFFERED $GH_PAGER $PAGER $NO_COLOR askpass=[$GIT_ASKPASS$SSH_ASKPASS] '
         'color=[$COLORTERM] token=[${GITHUB_TOKEN-unset}] same=$([ "$LC_ALL" = "$LANG" ] && echo yes)"\n'
         "shopt -q login_shell && echo login\n")
LONG = "head -c 200000 /dev/zero | tr '\\0' x; echo; echo last"


def run(command, **kw):
    return shell.run(command, progress=None, **kw)


def run_async(command, **kw):
    return asyncio.run(shell.run_async(command, progress=None, **kw))


def start(command, **kw):
    with shell.start(command, **kw) as job:
        return job.wait(timeout=30)


DRIVERS = [pytest.param(run, id="run"), pytest.param(run_async, id="run_async"), pytest.param(start, id="start")]


@pytest.fixture
def harness_env(monkeypatch):
    for kv in ("GITHUB_TOKEN=ghp_x", "COLORTERM=truecolor", "GIT_ASKPASS=/bin/askpass", "GH_PAGER=less", "PAGER=less"):
        name, value = kv.split("=", 1)
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("driver", DRIVERS)
def test_agent_sets_its_defaults_in_a_login_shell(driver, harness_env):
    result = driver(PROBE, agent=True)
    assert result["stdout"] == "Never 1 cat cat 1 askpass=[] color=[] token=[unset] same=yes\nlogin\n"
    assert result["stderr"] == ""


@pytest.mark.skipif(shutil.which("locale") is None, reason="needs the locale program to ask bash's locale")
def test_agent_locale_is_utf8_and_exists():
    result = run('echo "$LC_ALL"; locale charmap', agent=True)
    name, charmap = result["stdout"].splitlines()
    assert name in ("C.UTF-8", "en_US.UTF-8") and charmap == "UTF-8"
    assert result["stderr"] == "", "the locale exists: no setlocale warning"


@pytest.mark.parametrize("driver", DRIVERS)
def test_agent_captures_head_and_tail_unless_capture_is_given(driver):
    both = driver(LONG, agent=True)
    assert both["truncated"] and both["stdout"].endswith("last\n")
    head = driver(LONG, agent=True, capture="head")
    assert head["truncated"] and not head["stdout"].endswith("last\n")


def test_agent_parts_one_by_one(harness_env):
    """Without agent=True the parts are chosen one by one: here the agent env without scrubbing."""
    result = run(PROBE, agent_env=True)
    assert "token=[ghp_x]" in result["stdout"] and result["stdout"].startswith("Never 1 cat cat 1")


def test_agent_becomes_the_flag():
    assert "--agent" in _validate.shell_options(agent=True).flags()
    assert "--agent" not in _validate.shell_options().flags()
    assert _validate.shell_options(agent=True, capture="head").flags()[-2:] == ["--capture=head", "--agent"]


@pytest.mark.parametrize("value", [1, None, "yes"])
def test_agent_must_be_a_bool(no_spawn, value):
    for call in (lambda: run("echo never", agent=value), lambda: run_async("echo never", agent=value),
                 lambda: shell.start("echo never", agent=value)):
        with pytest.raises(shell.ShellsupError) as exc:
            call()
        assert exc.value.category == "validation"
        assert "agent must be True or False" in str(exc.value)
