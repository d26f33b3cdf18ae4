"""run() and run_async(): result keys and meanings, cwd, env, budget, grace, progress, concurrency."""

import asyncio
import os
import pickle
import time

import pytest

import shellsup as shell
from shellsup import RESULT_KEYS, SkillResult


def test_result_has_exactly_the_13_keys_in_the_skills_order():
    result = shell.run("echo out; echo err >&2", progress=None)
    assert isinstance(result, dict) and isinstance(result, SkillResult)
    assert list(result) == list(RESULT_KEYS) == [
        "command", "cwd", "stdout", "stderr", "exitCode", "signal", "cancelled", "timedOut",
        "truncated", "totalBytes", "capturedBytes", "progressBytes", "durationMs",
    ]
    assert result["command"] == "echo out; echo err >&2"
    assert result["cwd"] == os.getcwd()
    assert (result["stdout"], result["stderr"]) == ("out\n", "err\n")
    assert (result["exitCode"], result["signal"]) == (0, None)
    assert (result["cancelled"], result["timedOut"], result["truncated"]) == (False, False, False)
    assert result["totalBytes"] == result["capturedBytes"] == result["progressBytes"] == 8
    assert isinstance(result["durationMs"], int) and 0 <= result["durationMs"] < 5000
    assert result.cancel_reason is None
    assert result.cleanup["tier"] in ("subreaper", "cgroup+subreaper") and result.cleanup["stragglers"] == []


@pytest.mark.parametrize("command,code,sig", [
    ("exit 0", 0, None),
    ("exit 1", 1, None),
    ("exit 255", 255, None),
    ("exit 126", 126, None),
    ("no-such-command-shellsup-test", 127, None),
    ("kill -KILL $$", 137, "SIGKILL"),
    ("kill -TERM $$", 143, "SIGTERM"),
    ("kill -SEGV $$", 139, "SIGSEGV"),
])
def test_exit_codes_and_signals(command, code, sig):
    result = shell.run(command, progress=None)
    assert (result["exitCode"], result["signal"]) == (code, sig)


def test_timeout_is_a_result_not_an_error():
    result = shell.run("sleep 5", timeout=0.1, progress=None)
    assert result["timedOut"] is True and result["cancelled"] is False
    assert result["exitCode"] == 143 and result["signal"] == "SIGTERM"
    assert result.cleanup["trigger"] == "timeout"


def test_grace_bounds_a_term_ignoring_command():
    start = time.monotonic()
    result = shell.run("trap '' TERM; sleep 5 & wait; sleep 5", timeout=0.1, grace=0.2, progress=None)
    assert time.monotonic() - start < 2
    assert result["timedOut"] and result.cleanup["killed"] >= 1


def test_background_jobs_are_killed_after_a_normal_exit(leaks):
    result = shell.run("sleep 300 & setsid sleep 300 & nohup sleep 300 >/dev/null 2>&1 & echo done",
                       progress=None)
    assert result["exitCode"] == 0 and result["stdout"] == "done\n"
    assert result.cleanup["signalled"] >= 3
    assert leaks.survivors() == []


# -- cwd ---------------------------------------------------------------------------


def test_cwd_is_resolved_and_symlinks_are_kept(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.chdir(tmp_path)
    result = shell.run("pwd", cwd="link", progress=None)
    assert result["cwd"] == str(link)
    assert result["stdout"] == f"{link}\n"
    assert shell.run("pwd", cwd=real, progress=None)["cwd"] == str(real)  # a Path works too


def test_default_cwd_is_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shell.run("pwd", progress=None)["stdout"] == f"{tmp_path}\n"


# -- env ---------------------------------------------------------------------------


def test_env_none_inherits_os_environ(monkeypatch):
    monkeypatch.setenv("SHELLSUP_TEST_VALUE", "inherited")
    assert shell.run("printf %s \"$SHELLSUP_TEST_VALUE\"", progress=None)["stdout"] == "inherited"


def test_env_mapping_replaces_the_environment(leaks, monkeypatch):
    monkeypatch.setenv("SHELLSUP_TEST_VALUE", "must-not-leak-in")
    env = {"ONLY": "this", "SHELLSUP_LEAK_TOKEN": leaks.token, "HOME": os.environ["HOME"]}
    result = shell.run("printf '%s|%s' \"$ONLY\" \"${SHELLSUP_TEST_VALUE-unset}\"", env=env, progress=None)
    assert result["stdout"] == "this|unset"


# -- progress ----------------------------------------------------------------------


def test_default_progress_writes_to_sys_stdout_and_stderr(capsys):
    result = shell.run("echo to-out; echo to-err >&2")
    captured = capsys.readouterr()
    assert captured.out == "to-out\n" == result["stdout"]
    assert captured.err == "to-err\n" == result["stderr"]


def test_default_progress_says_when_the_budget_is_spent(capsys):
    """A long output past the budget: the default progress shows the head, the
    marker, then one line saying the rest goes uncaptured and how to keep its end."""
    # The two pipes are read by two readers, and the budget goes in the order they take their text:
    # on a starved machine the stderr line could be taken before the stdout reader took the
    # bytes seq wrote before it. The pause puts it after them.
    result = shell.run("seq 1 20000; sleep 1; echo the-end-with-the-failures >&2", budget=1000)
    captured = capsys.readouterr()
    assert result["truncated"] and captured.out == result["stdout"]
    assert captured.out.endswith("\n... output truncated at 1000-byte capture limit ...\n")
    assert captured.err == ("shellsup: the output goes on past the 1000-byte capture budget, neither captured nor shown; "
                            'to keep its end pass capture="head+tail" (spill= keeps every byte)\n')
    assert "the-end" not in result["stderr"]


def test_default_progress_with_head_tail_says_the_end_is_kept(capsys):
    result = shell.run("seq 1 20000; sleep 1; echo the-end >&2", budget=1000, capture="head+tail")  # the pause: as above
    captured = capsys.readouterr()
    assert "the-end" in result["stderr"], "head+tail keeps the end"
    assert captured.err == ("shellsup: the output goes on past the 1000-byte capture budget, not shown here; "
                            'the result keeps its end (capture="head+tail")\n')


def test_default_progress_within_the_budget_adds_nothing(capsys):
    shell.run("seq 1 10", budget=1000)
    assert capsys.readouterr() == ("".join(f"{i}\n" for i in range(1, 11)), "")


def test_help_of_run_says_where_the_output_goes_past_the_budget():
    doc = " ".join(shell.run.__doc__.split())
    assert 'the default then prints one line on sys.stderr saying that the rest of the output is neither captured nor shown, and that ``capture="head+tail"`` keeps its end' in doc
    assert 'capture="head+tail"' in " ".join(shell.print_progress.__doc__.split())


def test_progress_none_is_silent(capsys):
    shell.run("echo quiet; echo quiet >&2", progress=None)
    assert capsys.readouterr() == ("", "")


def test_progress_callable_gets_stream_and_text_in_order():
    seen = []
    shell.run("echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c",
              progress=lambda stream, text: seen.append((stream, text)))
    assert seen == [("stdout", "a\n"), ("stderr", "b\n"), ("stdout", "c\n")]


def test_progress_arrives_while_the_command_runs():
    arrivals = []
    start = time.monotonic()
    shell.run("echo first; sleep 0.5; echo second", progress=lambda s, t: arrivals.append(time.monotonic() - start))
    assert len(arrivals) == 2 and arrivals[0] < 0.45 and arrivals[1] >= 0.5


# -- the result object ---------------------------------------------------------------


def test_result_is_awaitable_to_itself():
    result = shell.run("echo x", progress=None)

    async def main():
        return await result

    assert asyncio.run(main()) is result


def test_repr_is_readable_and_clipped():
    result = shell.run("head -c 5000 /dev/zero | tr '\\0' a", progress=None)
    text = repr(result)
    assert text.startswith("SkillResult(exitCode=0, signal=None, timedOut=False, cancelled=False")
    assert "...<5000 chars>" in text and len(text) < 600
    assert result._repr_mimebundle_() == {"text/plain": text}


def test_result_pickles_with_its_extras():
    result = shell.run("echo x", progress=None)
    again = pickle.loads(pickle.dumps(result))
    assert again == result and again.cleanup == result.cleanup and type(again) is SkillResult


# -- asyncio -------------------------------------------------------------------------


def test_run_async_returns_the_same_result():
    result = asyncio.run(shell.run_async("echo hi; exit 4", progress=None))
    assert list(result) == list(RESULT_KEYS)
    assert (result["stdout"], result["exitCode"]) == ("hi\n", 4)


def test_several_runs_proceed_concurrently_in_one_loop():
    async def main():
        return await asyncio.gather(*(shell.run_async(f"sleep 0.4; echo {i}", progress=None) for i in range(5)))

    start = time.monotonic()
    results = asyncio.run(main())
    assert time.monotonic() - start < 1.9  # 5 × 0.4 s in sequence would be 2 s
    assert [r["stdout"] for r in results] == [f"{i}\n" for i in range(5)]


def test_async_progress_may_be_a_coroutine_function():
    seen = []

    async def progress(stream, text):
        await asyncio.sleep(0)
        seen.append(text)

    asyncio.run(shell.run_async("echo a", progress=progress))
    assert seen == ["a\n"]


def test_async_timeout_and_large_output():
    async def main():
        return await shell.run_async("head -c 1000000 /dev/zero | tr '\\0' z; sleep 5", timeout=0.5, progress=None)

    result = asyncio.run(main())
    assert result["timedOut"] and result["truncated"] and result["totalBytes"] == 1000000
