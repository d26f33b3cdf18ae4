"""run_async cleans up however the event loop lets go of it.

A second Ctrl-C, asyncio.run cancelling every task at shutdown (five runs in
flight), and a loop closed with a run in flight: afterwards no shellsup and
no descendant is alive (the leaks fixture, plus an explicit poll with a
deadline, since shellsup may finish its cleanup just after Python exits).
Each scenario runs in a child Python with a 60 s self-destruct alarm.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

# Ignores SIGTERM so that the cleanup lasts the whole grace: a second Ctrl-C lands inside it.
STUBBORN = "trap '' TERM; echo ready; sleep 300 & setsid sleep 300 & wait"
TREE = "echo ready; sleep 300 & setsid sleep 300 & wait"


def _child(script, env, **popen):
    code = "import signal; signal.alarm(60); signal.signal(signal.SIGINT, signal.default_int_handler)\n" + textwrap.dedent(script)
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def _finish(child, timeout=30):
    try:
        return child.communicate(timeout=timeout)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


# After asyncio.run has returned or raised, the child Python reports and stays
# alive: the tree must be gone already, with nothing left to a later exit or GC.
EPILOGUE = """
    import gc, signal
    gc.collect()
    print("after asyncio.run", flush=True)
    signal.pause()
"""


def _gone_while_alive(leaks, child, report="after asyncio.run\n"):
    """Wait for the child's report; at that moment nothing but the child may be alive."""
    line = ""
    while line != report:
        line = child.stdout.readline()
        assert line, f"the child ended early: {child.wait()} {child.stderr.read()}"
    left = [p for p in leaks.survivors() if p.pid != child.pid]
    assert left == [], left
    assert child.poll() is None


def _nothing_left(leaks, deadline=15.0):
    end = time.monotonic() + deadline
    while leaks.survivors():
        if time.monotonic() > end:
            pytest.fail(f"still alive after {deadline}s: {leaks.survivors()}")
        time.sleep(0.05)


DOUBLE_CTRL_C = f"""
    import asyncio
    import shellsup as shell

    async def main():
        await shell.run_async({STUBBORN!r}, timeout=30, grace=3)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
""" + EPILOGUE


@pytest.mark.parametrize("target", ["process", "group"])
def test_second_ctrl_c_under_asyncio_run_still_cleans_up(leaks, child_env, target):
    child = _child(DOUBLE_CTRL_C, child_env, start_new_session=True)
    try:
        leaks.wait_for(2, comm="sleep", deadline=20)
        send = (lambda: child.send_signal(signal.SIGINT)) if target == "process" else \
            (lambda: os.killpg(child.pid, signal.SIGINT))
        send()
        time.sleep(0.3)  # inside the 3 s grace of the first cancel
        send()
        _gone_while_alive(leaks, child)
    finally:
        child.kill()
        child.wait()
    _nothing_left(leaks)


SHUTDOWN = f"""
    import asyncio
    import shellsup as shell

    async def main():
        for i in range(5):
            asyncio.ensure_future(shell.run_async({TREE!r}, timeout=30, progress=None))
        await asyncio.sleep(0)
        print("started", flush=True)
        await asyncio.sleep(3600)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
""" + EPILOGUE


def test_asyncio_run_shutdown_cancels_five_runs_and_cleans_up(leaks, child_env):
    child = _child(SHUTDOWN, child_env, start_new_session=True)
    try:
        leaks.wait_for(10, comm="sleep", deadline=30)
        assert len([p for p in leaks.survivors() if p.comm == "shellsup"]) == 5
        child.send_signal(signal.SIGINT)  # asyncio.run cancels main, then every other task
        _gone_while_alive(leaks, child)
    finally:
        child.kill()
        child.wait()
    _nothing_left(leaks)


SHUTDOWN_ON_RETURN = f"""
    import asyncio
    import shellsup as shell

    async def main():
        for i in range(5):
            asyncio.ensure_future(shell.run_async({TREE!r}, timeout=30, progress=None))
        while len(open("/proc/self/task/" + str(__import__("os").getpid()) + "/children").read().split()) < 5:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        print("returning", flush=True)

    asyncio.run(main())
""" + EPILOGUE


def test_tasks_left_pending_when_main_returns_are_cleaned_up(leaks, child_env):
    child = _child(SHUTDOWN_ON_RETURN, child_env)
    try:
        _gone_while_alive(leaks, child)
    finally:
        child.kill()
        child.wait()
    _nothing_left(leaks)


LOOP_CLOSE = f"""
    import asyncio, gc, os, sys
    import shellsup as shell

    loop = asyncio.new_event_loop()
    task = loop.create_task(shell.run_async({TREE!r}, timeout=30, progress=None))

    async def until_started():
        while len(open(f"/proc/self/task/{{os.getpid()}}/children").read().split()) < 1:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)

    loop.run_until_complete(until_started())
    loop.close()  # the run is still in flight
    print("closed", flush=True)
    if sys.argv[-1] == "collect":
        del task
        gc.collect()
        print("collected", flush=True)
        signal.pause()  # stay alive: the binding, not the exit, must end the run
"""


@pytest.mark.parametrize("how", ["exit", "collect"])
def test_loop_closed_with_a_run_in_flight_cleans_up(leaks, child_env, how):
    code = "import signal; signal.alarm(60); signal.signal(signal.SIGINT, signal.default_int_handler)\n" + textwrap.dedent(LOOP_CLOSE)
    child = subprocess.Popen([sys.executable, "-c", code, how], env=child_env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        if how == "exit":
            out, err = _finish(child)
            assert child.returncode == 0, err
            assert "closed" in out
            _nothing_left(leaks)
        else:
            assert child.stdout.readline() == "closed\n"
            assert child.stdout.readline() == "collected\n"
            end = time.monotonic() + 15
            while [p for p in leaks.survivors() if p.pid != child.pid]:
                assert time.monotonic() < end, leaks.survivors()
                time.sleep(0.05)
            assert child.poll() is None  # Python is still alive: the binding ended the run
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    _nothing_left(leaks)


SYNC_DOUBLE_CTRL_C = f"""
    import shellsup as shell

    try:
        shell.run({STUBBORN!r}, timeout=30, grace=3, progress=None)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
""" + EPILOGUE.replace("asyncio.run", "run")


@pytest.mark.parametrize("target", ["process", "group"])
def test_second_ctrl_c_during_run_cleanup_is_absorbed(leaks, child_env, target):
    child = _child(SYNC_DOUBLE_CTRL_C, child_env, start_new_session=True)
    try:
        leaks.wait_for(2, comm="sleep", deadline=20)
        send = (lambda: child.send_signal(signal.SIGINT)) if target == "process" else \
            (lambda: os.killpg(child.pid, signal.SIGINT))
        send()
        time.sleep(0.3)  # inside the 3 s grace of the first cancel
        send()
        _gone_while_alive(leaks, child, "after run\n")
    finally:
        child.kill()
        child.wait()
    _nothing_left(leaks)
