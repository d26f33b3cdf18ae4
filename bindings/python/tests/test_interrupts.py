"""Interrupts: SIGINT, task cancellation and a failing progress callback all clean up first.

Each scenario starts "setsid sleep 300 & sleep 300", waits (polling /proc,
with a deadline) until both sleeps exist, interrupts, and then checks that
the interrupt surfaced within a couple of seconds and that no process
carrying the test's token survived (the leaks fixture).
"""

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import shellsup as shell

TREE = "echo ready; setsid sleep 300 & sleep 300"
# Seconds an interrupted run may take to surface. Usually well under 0.5 s, but a
# child that bash has just forked can lose its SIGTERM (bash's own handler is still
# installed until exec), and then cleanup waits the full grace (2 s) before SIGKILL.
SETTLE = 3.5


def _child(script, env, **popen):
    """A child Python running script, with a 60 s self-destruct alarm."""
    code = "import signal; signal.alarm(60); signal.signal(signal.SIGINT, signal.default_int_handler)\n" + textwrap.dedent(script)
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


SYNC_CHILD = f"""
    import shellsup as shell
    try:
        shell.run({TREE!r}, timeout=30)
    except KeyboardInterrupt:
        print("KeyboardInterrupt caught", flush=True)
        raise
"""

ASYNC_CHILD = f"""
    import asyncio
    import shellsup as shell

    async def main():
        try:
            await shell.run_async({TREE!r}, timeout=30)
        except asyncio.CancelledError:
            print("CancelledError caught", flush=True)
            raise

    asyncio.run(main())
"""


@pytest.mark.parametrize("script,caught", [(SYNC_CHILD, "KeyboardInterrupt caught"),
                                           (ASYNC_CHILD, "CancelledError caught")], ids=["sync", "asyncio"])
@pytest.mark.parametrize("target", ["process", "group"])
def test_sigint_to_a_child_python_cleans_up_and_raises(leaks, child_env, script, caught, target):
    child = _child(script, child_env, start_new_session=True)
    try:
        leaks.wait_for(2, comm="sleep")
        start = time.monotonic()
        if target == "process":
            child.send_signal(signal.SIGINT)  # only Python: the binding sends the cancel frame
        else:
            # A terminal's Ctrl-C: SIGINT to Python's process group. shellsup has a group of
            # its own (test_pgroup.py), so only Python gets it, and the binding cancels.
            os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=10)
        elapsed = time.monotonic() - start
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert elapsed < SETTLE, f"took {elapsed:.2f}s"
    assert child.returncode == -signal.SIGINT, (child.returncode, err)
    assert caught in out
    assert "KeyboardInterrupt" in err
    assert leaks.survivors() == []


def test_keyboard_interrupt_in_process(leaks):
    def interrupt_once_tree_exists():
        try:
            leaks.wait_for(2, comm="sleep")
        finally:  # even if the tree never showed up: the test then fails on its own
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    watcher = threading.Thread(target=interrupt_once_tree_exists)
    watcher.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            shell.run(TREE, timeout=30, progress=None)
    finally:
        watcher.join()
    assert time.monotonic() - start < 5
    assert leaks.survivors() == []


def test_task_cancel_cleans_up_and_reraises(leaks):
    async def main():
        task = asyncio.ensure_future(shell.run_async(TREE, timeout=30, progress=None))
        while len([p for p in leaks.survivors() if p.comm == "sleep"]) < 2:
            assert not task.done()
            await asyncio.sleep(0.01)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - start

    assert asyncio.run(main()) < SETTLE
    assert leaks.survivors() == []


def test_wait_for_timeout_cancels_the_run(leaks):
    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(shell.run_async(TREE, timeout=30, progress=None), 0.3)

    asyncio.run(main())
    assert leaks.survivors() == []


def test_cancel_before_the_run_begins_spawns_nothing(leaks, monkeypatch):
    async def main():
        task = asyncio.ensure_future(shell.run_async("echo never", progress=None))
        task.cancel()  # before its first step
        with pytest.raises(asyncio.CancelledError):
            await task

    spawned = []
    real = asyncio.create_subprocess_exec
    monkeypatch.setattr(asyncio, "create_subprocess_exec", lambda *a, **k: spawned.append(a) or real(*a, **k))
    asyncio.run(main())
    assert spawned == []


class Stop(Exception):
    pass


def _raise_on_ready(stream, text):
    if "ready" in text:
        raise Stop("progress callback refused")


def test_progress_callback_error_cancels_and_propagates(leaks):
    start = time.monotonic()
    with pytest.raises(Stop):
        shell.run(TREE, timeout=30, progress=_raise_on_ready)
    assert time.monotonic() - start < SETTLE
    assert leaks.survivors() == []


def test_progress_callback_error_cancels_and_propagates_async(leaks):
    async def main():
        with pytest.raises(Stop):
            await shell.run_async(TREE, timeout=30, progress=_raise_on_ready)

    start = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - start < SETTLE
    assert leaks.survivors() == []


def test_async_progress_coroutine_error_propagates(leaks):
    async def progress(stream, text):
        await asyncio.sleep(0)
        _raise_on_ready(stream, text)

    async def main():
        with pytest.raises(Stop):
            await shell.run_async(TREE, timeout=30, progress=progress)

    asyncio.run(main())
    assert leaks.survivors() == []
