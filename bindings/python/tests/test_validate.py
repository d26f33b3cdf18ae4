"""Validation: bad arguments raise ShellsupError("validation") quoting the value, before any spawn."""

import asyncio
import math
import os
import subprocess

import pytest

import shellsup as shell

TIMEOUT_RANGE = "timeout must be greater than 0 and at most 600 seconds"
# A timeout over the maximum points to a job's lifetime, in the binary's words.
LONGER = "; a longer run is a job: give it a lifetime instead (--lifetime, lifetime=, Lifetime) of up to 604800 seconds (7 days)"

# (id, keyword arguments, exact message or a fragment that must appear)
ROWS = [
    ("timeout-0", dict(timeout=0), f"{TIMEOUT_RANGE} (got 0)"),
    ("timeout-0.0", dict(timeout=0.0), f"{TIMEOUT_RANGE} (got 0.0)"),
    ("timeout-neg", dict(timeout=-1), f"{TIMEOUT_RANGE} (got -1)"),
    ("timeout-601", dict(timeout=601), f"{TIMEOUT_RANGE} (got 601){LONGER}"),
    ("timeout-600.5", dict(timeout=600.5), f"{TIMEOUT_RANGE} (got 600.5){LONGER}"),
    ("timeout-nan", dict(timeout=math.nan), f"{TIMEOUT_RANGE} (got nan)"),
    ("timeout-inf", dict(timeout=math.inf), f"{TIMEOUT_RANGE} (got inf){LONGER}"),
    ("timeout-true", dict(timeout=True), "timeout must be a number of seconds greater than 0 and at most 600 (got True of type bool)"),
    ("timeout-str", dict(timeout="120"), 'timeout must be a number of seconds greater than 0 and at most 600 (got "120" of type str)'),
    ("timeout-10**400", dict(timeout=10**400), f"{TIMEOUT_RANGE} (got 1000000000000000000000000000000000000000...(401 digits)){LONGER}"),
    ("timeout--10**400", dict(timeout=-10**400), f"{TIMEOUT_RANGE} (got -100000000000000000000000000000000000000...(402 digits))"),
    ("timeout-str-5", dict(timeout="5"), '(got "5" of type str)'),
    ("timeout-list", dict(timeout=[5]), "(got [5] of type list)"),
    ("timeout-complex", dict(timeout=1j), "(got 1j of type complex)"),
    ("grace-10**400", dict(grace=10**400), "grace must be at least 0 and at most 60 seconds (got 1000000000000000000000000000000000000000...(401 digits))"),
    ("grace-true", dict(grace=True), "(got True of type bool)"),
    ("grace-str", dict(grace="1"), '(got "1" of type str)'),
    ("budget-10**400", dict(budget=10**400), "budget must be at least 52 and at most 524288 bytes (got 1000000000000000000000000000000000000000...(401 digits))"),
    ("budget-str", dict(budget="65536"), '(got "65536" of type str)'),
    ("command-empty", dict(command=""), 'command must be a non-empty string (got "")'),
    ("command-none", dict(command=None), "command must be a non-empty string (got None of type NoneType)"),
    ("command-bytes", dict(command=b"echo"), "command must be a non-empty string (got b'echo' of type bytes)"),
    ("command-nul", dict(command="echo a\0b"), "command must not contain a NUL byte"),
    ("command-200KiB", dict(command="x" * 200 * 1024),
     "command is 204800 bytes; the kernel passes at most 131072 bytes (128 KiB, MAX_ARG_STRLEN, with the NUL) in one argument"),
    ("command-131072", dict(command="é" * 65536), "command is 131072 bytes;"),
    ("command-surrogate", dict(command="echo \udcff"), "command must be valid UTF-8"),
    ("cwd-missing", dict(cwd="/nonexistent/shellsup-test"), 'cwd "/nonexistent/shellsup-test" does not exist'),
    ("cwd-file", dict(cwd="/etc/passwd"), 'cwd "/etc/passwd" is not a directory'),
    ("cwd-int", dict(cwd=3), "cwd must be a path or None (got 3 of type int)"),
    ("budget-51", dict(budget=51), "budget must be at least 52 and at most 524288 bytes (got 51)"),
    ("budget-max+1", dict(budget=524289), "budget must be at least 52 and at most 524288 bytes (got 524289)"),
    ("budget-true", dict(budget=True), "(got True of type bool)"),
    ("budget-float", dict(budget=1000.0), "(got 1000.0 of type float)"),
    ("grace-neg", dict(grace=-1), "grace must be at least 0 and at most 60 seconds (got -1)"),
    ("grace-61", dict(grace=61), "grace must be at least 0 and at most 60 seconds (got 61)"),
    ("grace-nan", dict(grace=math.nan), "grace must be at least 0 and at most 60 seconds (got nan)"),
    ("grace-false", dict(grace=False), "(got False of type bool)"),
    ("env-list", dict(env=["A=1"]), "env must be a mapping or None (got ['A=1'] of type list)"),
    ("env-int-value", dict(env={"A": 1}), 'env must map strings to strings (got "A": 1)'),
    ("env-bad-name", dict(env={"A=B": "1"}), 'env has an invalid variable name "A=B"'),
    ("env-nul", dict(env={"A": "1\0"}), 'env value of "A" contains a NUL byte'),
    ("progress-str", dict(progress="stdout"), 'progress must be a callable (stream, text) or None (got "stdout")'),
]


def _call(kwargs):
    kwargs = dict(kwargs)
    command = kwargs.pop("command", "echo never")
    return command, kwargs


@pytest.mark.parametrize("kwargs,message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_refused_before_spawn(no_spawn, kwargs, message):
    command, kw = _call(kwargs)
    with pytest.raises(shell.ShellsupError) as exc:
        shell.run(command, **kw)
    assert exc.value.category == "validation"
    assert isinstance(exc.value, RuntimeError)
    assert message in str(exc.value)
    if (message.endswith(")") or message.endswith(LONGER)) and "(got" in message and message.startswith(("timeout must be greater", "grace must", "budget must be at")):
        assert str(exc.value) == message


@pytest.mark.parametrize("kwargs,message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_refused_before_spawn_async(no_spawn, kwargs, message):
    command, kw = _call(kwargs)
    with pytest.raises(shell.ShellsupError) as exc:
        asyncio.run(shell.run_async(command, **kw))
    assert exc.value.category == "validation" and message in str(exc.value)


# The binary's own validation says the same thing, word for word.
PARITY = [
    (dict(timeout=0), ["--timeout", "0"]),
    (dict(timeout=-1), ["--timeout", "-1"]),
    (dict(timeout=601), ["--timeout", "601"]),
    (dict(timeout=math.nan), ["--timeout", "nan"]),
    (dict(timeout=math.inf), ["--timeout", "inf"]),
    (dict(grace=-1), ["--grace", "-1"]),
    (dict(grace=61), ["--grace", "61"]),
    (dict(command=""), []),
    (dict(command="x" * 200 * 1024), None),  # cannot reach the binary at all: E2BIG
    (dict(cwd="/nonexistent/shellsup-test"), ["--cwd", "/nonexistent/shellsup-test"]),
    (dict(cwd="/etc/passwd"), ["--cwd", "/etc/passwd"]),
]


@pytest.mark.parametrize("kwargs,flags", PARITY, ids=[str(list(p[0].values())[0])[:20] for p in PARITY])
def test_binding_and_binary_use_the_same_words(shellsup_bin, kwargs, flags):
    command, kw = _call(kwargs)
    with pytest.raises(shell.ShellsupError) as exc:
        shell.run(command, **kw)
    if flags is None:
        with pytest.raises(OSError):  # the kernel refuses the argument: E2BIG
            subprocess.run([shellsup_bin, "--", command], stdin=subprocess.DEVNULL, capture_output=True)
        return
    done = subprocess.run([shellsup_bin, *flags, "--", command], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=10)
    assert done.returncode == 125
    assert done.stderr.strip() == "shellsup: " + str(exc.value)


@pytest.mark.parametrize("kwargs", [
    dict(timeout=600), dict(timeout=0.05), dict(timeout=1), dict(budget=52), dict(budget=524288),
    dict(grace=0), dict(grace=60), dict(grace=0.5), dict(env={"PATH": os.defpath}),
], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_boundaries_are_accepted(kwargs):
    result = shell.run("true", progress=None, **kwargs)
    assert result["exitCode"] == 0


def test_longest_command_runs():
    command = ": " + "x" * (131071 - 2)
    assert len(command.encode()) == 131071
    result = shell.run(command, progress=None)
    assert result["exitCode"] == 0 and result["command"] == command


def test_numpy_like_float_subclass_is_passed_as_a_plain_number():
    class Seconds(float):
        def __repr__(self):
            return f"Seconds({float(self)})"

    result = shell.run("true", timeout=Seconds(5.5), progress=None)
    assert result["exitCode"] == 0


def test_none_means_the_default():
    from shellsup import _limits, _validate

    req = _validate.request("true", None, None, None, None, None)
    assert (req.deadline, req.budget, req.grace_seconds) == (_validate.Deadline("timeout", 120), 65536, 2.0)
    assert (_limits.DEFAULT_TIMEOUT, _limits.DEFAULT_BUDGET, _limits.DEFAULT_GRACE) == (120, 65536, 2)
    assert "--timeout" in req.argv("shellsup") and req.argv("shellsup")[req.argv("shellsup").index("--timeout") + 1] == "120"


def test_timeout_none_runs_with_the_default():
    result = shell.run("printf ok", timeout=None, budget=None, grace=None, progress=None)
    assert result["stdout"] == "ok" and result["timedOut"] is False


def test_timeout_none_runs_with_the_default_async():
    result = asyncio.run(shell.run_async("printf ok", timeout=None, progress=None))
    assert result["stdout"] == "ok"
