"""Interactive jobs and runs (docs/interactive.md): a terminal, input, expect, Ctrl-C, idle, needs_input.

Real programs throughout: python3 -i, bash's read, an interactive bash, cat, tail -f. The leak check
(conftest) runs after each test.
"""

from __future__ import annotations

import sys
import time

import pytest

import shellsup as shell
from shellsup import JobError, JobTimeoutError, ShellsupError

PY = "/usr/bin/python3" if sys.executable != "/usr/bin/python3" else sys.executable
DEADLINE = 60.0


def test_python_repl_driven_by_write_and_expect() -> None:
    with shell.start(f"{PY} -i -q", pty=True, no_login=True) as job:
        job.expect(r">>> ")
        job.write("x = 6 * 7\n")
        job.expect(r">>> ")
        job.write("print(f'answer={x}')\n")
        m = job.expect(r"answer=(\d+)\r\n")
        assert m.group(1) == "42"
        job.write(b"exit()\n")
        result = job.wait(DEADLINE)
        assert result["exitCode"] == 0
        assert result.status == "exited"


def test_read_p_answered_and_waiting() -> None:
    with shell.start("read -p 'Name? ' name; echo \"hello $name\"", pty=True, no_login=True) as job:
        job.expect(r"Name\? ")
        end = time.monotonic() + DEADLINE
        while not job.waiting:
            assert time.monotonic() < end, "no waiting frame for read -p"
            time.sleep(0.01)
        assert job.prompt == "Name? "
        job.write("Ada\n")
        assert not job.waiting, "input was written: no longer waiting"
        assert job.expect(r"hello (\w+)").group(1) == "Ada"
        assert job.wait(DEADLINE)["exitCode"] == 0


def test_run_with_a_password_prompt_needs_input_at_once() -> None:
    began = time.monotonic()
    result = shell.run("bash -c 'read -s -p Password: p'", pty=True, no_login=True, progress=None)
    elapsed = time.monotonic() - began
    assert result.status == "needs_input"
    assert result.needs_input and result.prompt == "Password:"
    assert not result["timedOut"]
    assert result.cleanup["trigger"] == "needs_input"
    assert result["durationMs"] < 1500, result  # 0.5 s of quiet plus a look or two
    assert elapsed < 5, elapsed


def test_ctrl_c_stops_the_foreground_sleep_and_the_shell_goes_on() -> None:
    cmd = "exec bash --rcfile <(echo \"PS1='PROMPT$ '\") -i"
    with shell.start(cmd, pty=True, no_login=True) as job:
        job.expect(r"PROMPT\$ ")
        job.write("sleep 100; echo status=$?\n")
        end = time.monotonic() + DEADLINE
        while not any(_comm(p) == "sleep" for p in _tree(job.pid)):
            assert time.monotonic() < end, "sleep did not start"
            time.sleep(0.01)
        began = time.monotonic()
        job.signal("INT")
        job.expect(r"PROMPT\$ ")
        assert time.monotonic() - began < 10
        job.write("echo still-here\n")
        job.expect(r"still-here\r\n")
        job.write("exit 4\n")
        assert job.wait(DEADLINE)["exitCode"] == 4


def test_idle_tail_f_ends_idle_at_its_bound() -> None:
    began = time.monotonic()
    result = shell.run("echo started; tail -f /dev/null", idle_timeout=0.5, no_login=True, progress=None)
    assert result.status == "idle" and result.idle
    assert not result["timedOut"]
    assert result["stdout"] == "started\n"
    assert 0.5 <= time.monotonic() - began < 10


def test_wait_for_idle_leaves_the_job_running() -> None:
    with shell.start("echo one; sleep 0.2; echo two; sleep 100", no_login=True) as job:
        job.wait_for(idle=0.5, timeout=DEADLINE)
        assert job.running
        assert "two" in job.read().stdout
        with pytest.raises(JobTimeoutError):
            shell.start  # noqa: B018 - keeps the name used
            job2 = shell.start("while :; do echo busy; sleep 0.05; done", no_login=True)
            try:
                job2.wait_for(idle=1, timeout=0.5)
            finally:
                job2.kill()
                job2.close()


HUNDRED_MB = b"y" * 99 + b"\n"


def test_100_mb_through_cat_with_shellsups_memory_bounded() -> None:
    data = HUNDRED_MB * (100 * (1 << 20) // len(HUNDRED_MB)) + b"LAST-LINE-42\n"
    with shell.start("cat; echo cat-done; sleep 100", stdin=True, no_login=True, spill_max="512M") as job:
        job.write(data)
        job.send_eof()
        job.expect(r"LAST-LINE-42\n", timeout=DEADLINE * 2)
        job.expect(r"cat-done")
        hwm = _vm_hwm(job.pid)
        assert job.kill()["totalBytes"] == len(data) + len("cat-done\n")
    assert hwm < 32 << 20, f"shellsup's peak RSS was {hwm >> 20} MiB for 100 MiB of input"


def test_100_mb_through_cat_on_a_raw_terminal_with_shellsups_memory_bounded() -> None:
    data = HUNDRED_MB * (100 * (1 << 20) // len(HUNDRED_MB)) + b"LAST-LINE-42\n"
    with shell.start("stty raw -echo; echo go; cat; sleep 100", pty=True, no_login=True, spill_max="512M") as job:
        job.expect("go")
        job.write(data)
        job.expect(r"LAST-LINE-42\n", timeout=DEADLINE * 2)
        hwm = _vm_hwm(job.pid)
        assert job.kill()["totalBytes"] >= len(data)
    assert hwm < 32 << 20, f"shellsup's peak RSS was {hwm >> 20} MiB for 100 MiB of input"


def test_leak_shapes_in_a_pty_job_are_cleaned_on_kill() -> None:
    setup = "(setsid sleep 300 &); ( (sleep 300 </dev/null >/dev/null 2>&1 &) & ); nohup sleep 300 >/dev/null 2>&1 & sleep 300 & echo ready"
    with shell.start(setup + "; sleep 300", pty=True, no_login=True, grace=0.2) as job:
        job.expect("ready")
        end = time.monotonic() + DEADLINE
        while sum(_comm(p) == "sleep" for p in _tree(job.pid)) < 5:
            assert time.monotonic() < end, "the shapes were not set up"
            time.sleep(0.01)
        result = job.kill()
        assert result["cancelled"]
        assert result.cleanup["stragglers"] == []  # and the conftest's leak check sees that none is left


def test_input_needs_an_interactive_job() -> None:
    with shell.start("sleep 100", no_login=True) as job:
        with pytest.raises(ShellsupError, match="needs a job started with pty=True or stdin=True"):
            job.write("x")
        with pytest.raises(ShellsupError, match="needs a job started with pty=True or stdin=True"):
            job.signal("INT")
        with pytest.raises(ShellsupError, match="needs a job started with pty=True"):
            job.resize(100, 40)


@pytest.mark.parametrize("kwargs, message", [
    ({"pty": True, "stdin": True}, "exclude each other"),
    ({"pty_size": (80, 24)}, "needs pty=True"),
    ({"pty": True, "pty_size": (0, 24)}, r"pty_size must be \(cols, rows\)"),
    ({"idle_timeout": 0}, "idle-timeout must be greater than 0"),
    ({"pty": "yes"}, "pty must be True or False"),
])
def test_bad_interactive_arguments_are_refused(kwargs, message, no_spawn) -> None:
    with pytest.raises(ShellsupError, match=message):
        shell.start("true", **kwargs)


def test_signal_names_are_checked() -> None:
    with shell.start("sleep 100", stdin=True, no_login=True) as job:
        with pytest.raises(ShellsupError, match="signal must be one of INT, QUIT, TSTP, HUP, TERM, CONT"):
            job.signal("KILL")


def test_expect_on_an_ended_job_raises_at_once_and_a_timeout_leaves_it_running() -> None:
    with shell.start("echo bye", pty=True, no_login=True) as job:
        job.wait(DEADLINE)
        began = time.monotonic()
        with pytest.raises(JobError):
            job.expect("never printed", timeout=30)
        assert time.monotonic() - began < 5
    with shell.start("sleep 100", stdin=True, no_login=True) as job:
        with pytest.raises(JobTimeoutError):
            job.expect("never printed", timeout=0.3)
        assert job.running


def _tree(root: int) -> list:
    kids, out = {}, []
    import os
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open(f"/proc/{e}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(e))
    todo = list(kids.get(root, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _vm_hwm(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_kill_while_a_write_waits_for_a_program_that_reads_nothing() -> None:
    import threading

    job = shell.start("echo ready; sleep 300", stdin=True, no_login=True, grace=0.5)
    try:
        job.expect("ready")
        writer = threading.Thread(target=job.write, args=(b"x" * (8 << 20),), daemon=True)
        writer.start()
        time.sleep(0.3)  # let write() fill the pipe; nothing below depends on it
        began = time.monotonic()
        result = job.kill()
        assert result["cancelled"] and result.cancel_reason == "request"
        assert time.monotonic() - began < 5
        writer.join(DEADLINE)
        assert not writer.is_alive(), "write() did not return after the job ended"
    finally:
        if job.running:
            job.kill()
        job.close()
