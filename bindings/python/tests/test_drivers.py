"""One core, two drivers: the limits are stated once, and run() and run_async() agree.

The same table of scenarios goes through the sync and the async driver and
the results are compared key by key (durations excluded); errors compare by
category and message.
"""

import ast
import asyncio
import json
from pathlib import Path

import pytest

import shellsup as shell
from shellsup import _limits

ROOT = Path(__file__).resolve().parents[3]
PKG = Path(shell.__file__).resolve().parent


def test_limits_table_equals_the_shared_file():
    shared = json.loads((ROOT / "testdata" / "limits.json").read_text())
    ours = dict(_limits.LIMITS, bindingSlack=_limits.BINDING_SLACK)
    assert ours == shared


def test_budget_minimum_is_the_smallest_that_holds_its_marker():
    assert _limits.budget_fits(_limits.MIN_BUDGET)
    assert not _limits.budget_fits(_limits.MIN_BUDGET - 1)


def _imports(path):
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
            names.update(f"{node.module or ''}.{a.name}".lstrip(".") for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_async_driver_imports_nothing_from_the_sync_driver():
    assert not any("_run" in name.split(".") for name in _imports(PKG / "_async.py"))
    assert not any("_async" in name.split(".") for name in _imports(PKG / "_run.py"))


def test_the_core_does_no_io():
    forbidden = {"os", "subprocess", "selectors", "asyncio", "socket", "threading"}
    assert not (_imports(PKG / "_core.py") & forbidden)


SCENARIOS = [
    ("echo", "echo hello; echo err >&2", {}),
    ("exit-7", "exit 7", {}),
    ("signal", "kill -9 $$", {}),
    ("timeout", "echo started; sleep 5", dict(timeout=0.2)),
    ("truncated", "seq 1 100000", dict(budget=1000)),
    ("stderr-overflow", "head -c 5000 /dev/zero | tr '\\0' E >&2; echo late", dict(budget=200)),
    ("utf8-split", "printf '\\xe2'; sleep 0.02; printf '\\x82\\xac \\xff'", {}),
    ("cwd", "pwd", dict(cwd="/")),
    ("background", "sleep 300 & setsid sleep 300 & echo bg", {}),
    ("term-ignorer", "trap '' TERM; sleep 300 & echo x; sleep 0.1", dict(grace=0)),
    ("env", "printf %s \"$ONLY\"", dict(env={"ONLY": "this", "PATH": "/usr/bin:/bin"})),
    ("invalid-timeout", "true", dict(timeout=0)),
    ("invalid-budget", "true", dict(budget=10**400)),
    ("invalid-cwd", "true", dict(cwd="/nonexistent/x")),
]


def _through_both(command, kwargs, leaks):
    env = kwargs.get("env")
    if env is not None:
        kwargs = dict(kwargs, env=dict(env, **{k: v for k, v in leaks.env().items()
                                               if k in ("HOME", "SHELLSUP_LEAK_TOKEN")}))
    outcomes = []
    chunks = []

    def progress(stream, text):
        chunks.append((stream, text))

    for call in (lambda: shell.run(command, progress=progress, **kwargs),
                 lambda: asyncio.run(shell.run_async(command, progress=progress, **kwargs))):
        chunks.clear()
        try:
            result = call()
        except shell.ShellsupError as exc:
            outcomes.append(("error", exc.category, str(exc)))
            continue
        outcomes.append(("result", _comparable(result), list(chunks)))
    return outcomes


def _comparable(result):
    keys = {k: v for k, v in result.items() if k != "durationMs"}
    cleanup = {k: v for k, v in result.cleanup.items() if k not in ("ms", "rounds")}
    return dict(keys, cancel_reason=result.cancel_reason, cleanup=cleanup)


@pytest.mark.parametrize("command,kwargs", [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_sync_and_async_drivers_agree(leaks, command, kwargs):
    sync, asynchronous = _through_both(command, kwargs, leaks)
    assert sync[0] == asynchronous[0]
    if sync[0] == "error":
        assert sync == asynchronous
        return
    a, b = sync[1], asynchronous[1]
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == b[key], f"{key}: sync {a[key]!r} != async {b[key]!r}"
    assert "".join(t for _, t in sync[2]) == "".join(t for _, t in asynchronous[2])
    assert leaks.survivors() == []
