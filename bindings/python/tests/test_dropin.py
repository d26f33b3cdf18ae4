"""Drop-in: calls written against the shell skill's documented API run unchanged.

The skill's SKILL.md: ``import harness_shell as shell``; ``shell.run(command,
cwd=None, timeout=120)`` returns a dict-like SkillResult, read as
``result["stdout"]`` / ``result["exitCode"]``; ``await`` resolves to the
result; timeout is greater than 0 and at most 600 seconds; errors are
RuntimeError. Below, SKILL_CELLS is such code, executed the way a kernel runs
a cell, with ``shell`` bound to this package.
"""

import asyncio
import json
import re
import textwrap

import shellsup

SKILL_CELLS = textwrap.dedent('''
    result = shell.run("echo hello")
    assert result["stdout"] == "hello\\n" and result["exitCode"] == 0

    result = shell.run("pwd", cwd="/tmp")
    assert result["stdout"] == "/tmp\\n" and result["cwd"] == "/tmp"

    result = shell.run("pwd", "/", 5)                      # positional cwd and timeout
    assert result["stdout"] == "/\\n"

    result = shell.run("sleep 5", timeout=0.05)            # fractions allowed
    assert result["timedOut"] is True and result["cancelled"] is False

    result = shell.run("exit 7")                           # non-zero exit: a result
    assert result["exitCode"] == 7 and result["signal"] is None

    result = shell.run("echo err >&2")
    assert result["stderr"] == "err\\n"

    assert result.get("truncated") is False
    assert {"totalBytes", "capturedBytes", "progressBytes", "durationMs"} <= set(result)
    json.dumps(result)                                     # plain JSON, like the host's reply

    try:
        shell.run("true", timeout=0)
    except RuntimeError as error:                          # the skill raised RuntimeError
        assert "timeout must be greater than 0 and at most 600 seconds" in str(error)
    else:
        raise AssertionError("timeout=0 accepted")

    async def cell():
        return await shell.run("echo awaited")             # a SkillResult is awaitable
    assert asyncio.run(cell())["stdout"] == "awaited\\n"
''')


def test_skill_cells_run_unchanged(capsys):
    namespace = {"shell": shellsup, "asyncio": asyncio, "json": json}
    exec(compile(SKILL_CELLS, "<skill cell>", "exec"), namespace)
    out = capsys.readouterr().out
    assert "hello\n" in out and "awaited\n" in out  # progress streamed, as the skill did


def test_import_as_shell():
    import shellsup as shell

    result = shell.run("printf ok", progress=None)
    assert list(result.keys()) == list(shellsup.RESULT_KEYS)
    assert len(result) == 13


def test_public_api():
    assert set(shellsup.__all__) >= {"run", "run_async", "SkillResult", "ShellsupError", "find_binary", "__version__"}
    assert issubclass(shellsup.ShellsupError, RuntimeError)
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", shellsup.__version__)
