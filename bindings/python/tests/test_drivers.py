"""One core, two drivers: the limits are stated once, and run() and run_async() agree.

The same table of scenarios goes through the sync and the async driver and
the results are compared key by key (durations excluded); errors compare by
category and message.
"""

import ast
import asyncio
import inspect
import json
import typing
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


def test_watchdog_outwaits_the_cleanup():
    """The watchdog arms at the deadline + grace + WATCHDOG_MARGIN; shellsup
    delivers totals within the deadline + grace + the cleanup's bounds. The
    margin exceeds those bounds twice over (a loaded machine), or a slow but
    working cleanup would be killed as a shellsup that stopped reporting."""
    assert _limits.CLEANUP_BOUND == pytest.approx(4.6)
    assert _limits.WATCHDOG_MARGIN >= 2 * _limits.CLEANUP_BOUND


def test_run_run_async_and_start_declare_shared_parameters_alike():
    """Every parameter run(), run_async() and start() share has the same kind,
    default and annotation (as written, and as evaluated), so the three cannot
    drift apart again (start() once had budget=None, spill: Optional[str] and
    spill_max: Optional[Union[int, str]] where run() had others)."""
    funcs = {"run": shell.run, "run_async": shell.run_async, "start": shell.start}
    params = {name: inspect.signature(f).parameters for name, f in funcs.items()}
    hints = {name: typing.get_type_hints(f) for name, f in funcs.items()}
    shared = set.intersection(*(set(p) for p in params.values()))
    assert {"command", "cwd", "env", "budget", "grace", "spill", "spill_max", "workspace", "max_memory", "capture"} <= shared
    for name in sorted(shared):
        seen = {f: (p[name].kind, p[name].default, str(p[name].annotation), hints[f][name]) for f, p in params.items()}
        assert len(set(seen.values())) == 1, f"{name}: {seen}"


def test_limits_name_the_table():
    """The job's limits are the one table's: _validate and _job keep no number of their own."""
    from shellsup import _job
    assert (_validate.DEFAULT_LIFETIME, _validate.MAX_LIFETIME) == (_limits.LIMITS["lifetime"]["default"],
                                                                    _limits.LIMITS["lifetime"]["max"])
    assert _job.DEFAULT_SPILL_MAX == _limits.LIMITS["spillMax"]["default"] == 256 << 20
    assert inspect.signature(shell.start).parameters["lifetime"].default == _limits.DEFAULT_LIFETIME


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


def test_the_modules_import_no_cycle():
    """The package's modules import one another without a cycle, TYPE_CHECKING
    imports included (_job imports _probe; _probe names what it needs of a job
    as a Protocol instead of importing _job)."""
    modules = {p.stem: p for p in PKG.glob("*.py")}
    graph = {m: {n.split(".")[-1] if n.startswith("shellsup.") else n.split(".")[0] for n in _imports(p)} & set(modules)
             for m, p in modules.items()}
    for m in modules:
        seen, todo = set(), list(graph[m])
        while todo:
            n = todo.pop()
            assert n != m, f"{m} imports itself through {sorted(seen)}"
            if n not in seen:
                seen.add(n)
                todo.extend(graph[n])


def test_the_core_does_no_io():
    forbidden = {"os", "subprocess", "selectors", "asyncio", "socket", "threading"}
    assert not (_imports(PKG / "_core.py") & forbidden)


SCENARIOS = [
    ("echo", "echo hello; echo err >&2", {}),
    ("exit-7", "exit 7", {}),
    ("signal", "kill -9 $$", {}),
    ("timeout", "echo started; sleep 5", dict(timeout=0.2)),
    ("truncated", "seq 1 100000", dict(budget=1000)),
    ("stderr-overflow", "head -c 5000 /dev/zero | tr '\\0' E >&2", dict(budget=200)),
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
    # ms and rounds are timing; so is killed in the cgroup tier, where
    # cgroup.kill also counts a process already dying of the SIGKILL pass
    cleanup = {k: v for k, v in result.cleanup.items() if k not in ("ms", "rounds", "killed")}
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
    for stream in ("stdout", "stderr"):  # the order across the two streams is the kernel's
        delivered = ["".join(t for s, t in chunks if s == stream) for chunks in (sync[2], asynchronous[2])]
        assert delivered[0] == delivered[1] == a[stream]
    assert leaks.survivors() == []


# The core alone: no process, only the decisions a driver carries out.

from shellsup import _core, _validate  # noqa: E402


def _new_core(timeout=1, grace=0):
    return _core.Core(_validate.request("x", None, timeout, None, grace, None), "/bin/shellsup")


def test_core_cancels_once_and_an_early_cancel_waits_for_the_spawn():
    core = _new_core()
    core.cancel(0.0)
    assert core.take() == []
    core.spawned(0.0)
    assert core.take() == [_core.WRITE_CANCEL, _core.SIGCONT]
    assert core.deadline == 0.0 + 0 + _limits.WATCHDOG_MARGIN
    core.cancel(1.0)
    core.fail(KeyboardInterrupt(), 1.0)
    assert core.take() == []


def test_core_escalates_when_shellsup_stops_reporting():
    core = _new_core(timeout=1, grace=2)
    core.spawned(0.0)
    assert core.deadline == 1 + 2 + _limits.WATCHDOG_MARGIN
    core.deadline_passed(13.0, stopped=True)
    assert core.take() == [_core.WRITE_CANCEL, _core.SIGCONT, _core.SIGTERM]
    assert core.deadline == 13.0 + 2 + _limits.WATCHDOG_MARGIN
    core.deadline_passed(core.deadline)
    assert core.take() == [_core.SIGCONT, _core.SIGKILL]
    core.deadline_passed(core.deadline)
    assert core.take() == [_core.STOP_READING]
    core.exited(-9)
    with pytest.raises(shell.ShellsupError) as exc:
        core.outcome()
    assert str(exc.value).startswith(
        "protocol: shellsup did not report within 1 s timeout + 2 s grace + 10 s (it was stopped), nor after SIGTERM; "
        "shellsup was killed by the binding without reporting a result; the binding sent it SIGCONT, SIGTERM, "
        "SIGCONT, SIGKILL; no start frame arrived")


def test_core_keeps_the_first_exception():
    core = _new_core()
    core.spawned(0.0)
    first, second = KeyboardInterrupt(), ValueError("second")
    core.fail(first, 0.1)
    core.fail(second, 0.2)
    assert core.take() == [_core.WRITE_CANCEL, _core.SIGCONT]
    core.exited(0)
    with pytest.raises(KeyboardInterrupt) as exc:
        core.outcome()
    assert exc.value is first


def test_core_closes_the_control_channel_on_a_protocol_error():
    core = _new_core()
    core.spawned(0.0)
    core.stdout(b"\x00\x00\x00\x00")
    with pytest.raises(shell.ShellsupError) as exc:
        core.next_chunk(0.1)
    core.fail(exc.value, 0.1)
    assert core.take() == [_core.CLOSE_STDIN]
    assert core.deadline == 0.1 + 0 + _limits.WATCHDOG_MARGIN


def test_core_takes_every_buffered_frame_before_judging_eof():
    from shellsup import _frames

    core = _new_core()
    core.spawned(0.0)
    start = {"type": "start", "version": 1, "pid": 1, "childPid": 2, "command": "x", "cwd": "/",
             "timeout": 1.0, "budget": 65536, "containment": "fake"}
    core.stdout(_frames.encode(start) + _frames.encode({"type": "progress", "stream": "stdout", "text": "hi"}))
    core.stdout_closed(0.1)  # EOF read before the frames were taken
    assert core.next_chunk(0.1) == ("stdout", "hi")
    assert core.next_chunk(0.1) is None
    core.stdout(b"")  # nothing more
    core2 = _new_core()
    core2.spawned(0.0)
    core2.stdout(_frames.encode(start)[:-1])
    core2.stdout_closed(0.1)
    with pytest.raises(shell.ShellsupError, match="truncated frame"):
        core2.next_chunk(0.1)
