"""Background jobs: start(), read(), wait_for(), kill(), and death with the owner.

Real processes throughout: a real http.server, real spill files, a real
owner process SIGKILLed. The leak check (conftest) runs after each test.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

import shellsup as shell
from shellsup import JobError, JobTimeoutError, ShellsupError

PY = sys.executable
DEADLINE = 60.0  # seconds for anything that only needs a moment on an idle machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state == b"Z"  # a zombie has been killed; its parent reaps it
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True


def poll(cond, deadline: float = DEADLINE, what: str = "condition") -> None:
    end = time.monotonic() + deadline
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"{what} not reached within {deadline}s")
        time.sleep(0.01)


# -- 1. a real server: wait for its port, fetch a page, kill it -----------------------------


def test_http_server_job_port_url_kill(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("hello from the job\n")
    (tmp_path / "sub").mkdir()
    port = free_port()
    job = shell.start(f"exec {PY} -m http.server {port} --bind 127.0.0.1", cwd=str(tmp_path), name="web")
    try:
        assert job.running and job.name == "web" and job in shell.jobs()
        assert job.wait_for(port=port, timeout=DEADLINE) is None
        mine = [p for p in job.ports() if p["port"] == port]
        assert mine and mine[0]["proto"] == "tcp" and mine[0]["addr"] == "127.0.0.1"
        server_pid = mine[0]["pid"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=DEADLINE) as resp:
            assert resp.status == 200
            assert resp.read() == b"hello from the job\n"
        job.wait_for(url=f"http://127.0.0.1:{port}/", timeout=DEADLINE)
        job.wait_for(url=f"http://127.0.0.1:{port}/sub", timeout=DEADLINE)  # 301 to /sub/: a 3xx is ready
        with pytest.raises(JobTimeoutError, match="it answered 404"):
            job.wait_for(url=f"http://127.0.0.1:{port}/missing", timeout=1)
        m = job.wait_for(pattern=r'"GET /index.html HTTP/1.1" (\d+)', timeout=DEADLINE)
        assert m is not None and m.group(1) == "200"
    finally:
        result = job.kill()
    assert result["cancelled"] is True and result.cancel_reason == "request"
    assert result.cleanup["trigger"] == "cancel" and result.cleanup["stragglers"] == []
    assert not job.running and job not in shell.jobs()
    assert gone(server_pid) and gone(job.bash_pid) and gone(job.pid)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    assert job.kill() is result and job.wait() is result  # the end is known; asking again is harmless
    spill = job.spill
    job.close()
    assert not os.path.exists(spill)  # the binding's own temporary spill directory is removed


def test_port_held_by_a_stranger_is_not_the_jobs() -> None:
    stranger = socket.socket()
    stranger.bind(("127.0.0.1", 0))
    stranger.listen()
    port = stranger.getsockname()[1]
    try:
        with shell.start("sleep 300", grace=0) as job:
            with pytest.raises(JobTimeoutError) as info:
                job.wait_for(port=port, timeout=1)
            assert "no process of the job listens on it" in str(info.value)
            assert "something else on this machine accepts connections" in str(info.value)
            assert job.running  # a timeout leaves the job running
    finally:
        stranger.close()


NETNS_LISTEN = "import socket,sys,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); " \
    "s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(); time.sleep(60)"


def test_port_in_the_jobs_own_netns_is_not_the_jobs() -> None:
    """The netns trap: the job listens on a stranger's port inside unshare -rn, and on another port here."""
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not available here")
    stranger = socket.socket()
    stranger.bind(("127.0.0.1", 0))
    stranger.listen()
    port, own = stranger.getsockname()[1], free_port()
    command = (f'timeout 60 unshare -rn {PY} -c "{NETNS_LISTEN}" 0.0.0.0 {port} & '
               f'timeout 60 {PY} -c "{NETNS_LISTEN}" 127.0.0.1 {own} & wait')
    try:
        with shell.start(command, grace=0) as job:
            job.wait_for(port=own, timeout=DEADLINE)  # the job's listener in shellsup's netns
            with pytest.raises(JobTimeoutError) as info:
                job.wait_for(port=port, timeout=2)
            assert "no process of the job listens on it" in str(info.value)
            assert "something else on this machine accepts connections" in str(info.value)
            assert [p["port"] for p in job.ports()] == [own]
            assert job.running
    finally:
        stranger.close()


# -- 2. 5 MiB in bursts: every byte once, in order, decoded as shellsup decodes -----------------


def bursty_bytes(seed: int, size: int) -> bytes:
    """Deterministic bytes: text, multibyte code points, invalid UTF-8 and stray continuation bytes."""
    rng = random.Random(seed)
    pieces = ["plain ascii line\n".encode(), "é".encode(), "€".encode(), "😀".encode(), "日本語\n".encode(),
              b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\x80", b"\xed\xa0\x80", b"\n"]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(pieces)
    return bytes(out[:size])


WRITER = textwrap.dedent("""
    import os, random, sys, time
    out, err = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
    rng = random.Random(7)
    pos = [0, 0]
    data = [out, err]
    while pos[0] < len(out) or pos[1] < len(err):
        fd = rng.choice([0, 1]) if pos[0] < len(out) and pos[1] < len(err) else (0 if pos[0] < len(out) else 1)
        n = rng.choice([1, 2, 3, 5, 4096, 65536, 200000])  # small writes split code points
        chunk = data[fd][pos[fd]:pos[fd] + n]
        while chunk:
            chunk = chunk[os.write(fd + 1, chunk):]
        pos[fd] += n
        if rng.random() < 0.02:
            time.sleep(0.005)
""")


def test_read_returns_every_byte_once_in_order(tmp_path: Path) -> None:
    raw_out = bursty_bytes(1, 4 << 20)
    raw_err = bursty_bytes(2, 1 << 20)
    (tmp_path / "out.bin").write_bytes(raw_out)
    (tmp_path / "err.bin").write_bytes(raw_err)
    (tmp_path / "writer.py").write_text(WRITER)
    spill = tmp_path / "spill"
    spill.mkdir(mode=0o700)
    job = shell.start(f"exec {PY} writer.py out.bin err.bin", cwd=str(tmp_path), spill=str(spill))
    got = {"stdout": [], "stderr": []}
    reads = 0
    while True:
        part = job.read(limit=64 * 1024)
        reads += 1
        got["stdout"].append(part.stdout)
        got["stderr"].append(part.stderr)
        assert len(part.stdout) + len(part.stderr) <= 64 * 1024  # at most one character per byte
        if part.eof:
            break
        if not part.stdout and not part.stderr:
            time.sleep(0.005)
    result = job.wait()
    assert result["exitCode"] == 0 and result["truncated"] is True  # far past the 64 KiB budget
    assert "".join(got["stdout"]) == raw_out.decode("utf-8", "replace")
    assert "".join(got["stderr"]) == raw_err.decode("utf-8", "replace")
    # The binary's own decoding agrees: each stream's capture (marker removed) begins the text read() gave.
    marker = "\n... output truncated at 65536-byte capture limit ...\n"
    for stream in ("stdout", "stderr"):
        captured = result[stream][: -len(marker)] if result[stream].endswith(marker) else result[stream]
        assert "".join(got[stream]).startswith(captured)
    assert (result["stdout"] + result["stderr"]).count(marker) == 1
    assert reads >= 5 * 16  # 5 MiB in reads of at most 64 KiB: 80 when every read is full (a slow reader), the last with eof
    assert job.read() == shell.Output(eof=True)  # nothing is returned twice
    # The spill files hold the raw bytes exactly, in the directory named.
    assert Path(job.spill).parent == spill
    assert (Path(job.spill) / "stdout").read_bytes() == raw_out
    assert (Path(job.spill) / "stderr").read_bytes() == raw_err
    job.close()
    assert Path(job.spill).exists()  # a directory the caller named is the caller's to clean


def test_output_tail_and_spill_cut(tmp_path: Path) -> None:
    job = shell.start("for i in $(seq 1 500); do echo line $i; done; echo oops >&2; exit 4", spill_max="1K")
    result = job.wait(timeout=DEADLINE)
    assert result["exitCode"] == 4
    tail = job.output(tail=2)
    assert tail.stderr == "oops\n" and tail.cut is True and tail.eof is True
    assert tail.stdout == "line 125\nline 12"  # the last two lines of the first 1 KiB, cut mid-line
    parts = [job.read(limit=100)]
    while not parts[-1].eof:
        assert parts[-1].more and len(parts[-1].stdout) + len(parts[-1].stderr) <= 100
        parts.append(job.read(limit=100))
    stdout = "".join(p.stdout for p in parts)
    assert len(parts) > 10 and all(p.cut for p in parts)
    assert stdout.startswith("line 1\nline 2\n") and stdout.endswith("line 125\nline 12") and len(stdout) == 1024
    assert "".join(p.stderr for p in parts) == "oops\n"
    job.close()


# -- 3. owner death: nothing of any job outlives a SIGKILLed owner ----------------------------------


OWNER = textwrap.dedent("""
    import json, sys, time
    import shellsup as shell
    jobs = [
        shell.start("setsid bash -c 'exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 300", name="daemon", grace=0.5),
        # A long grace: an owner's death must not wait for it (see below).
        shell.start("trap '' TERM; sleep 300 & sleep 300", name="term-ignorer", grace=5 if sys.argv[1] == "sigkill" else 0.5),
        shell.start("sleep 300", name="plain", grace=0.5),
    ]
    print(json.dumps({"spill": [j.spill for j in jobs], "pids": [j.pid for j in jobs]}), flush=True)
    if sys.argv[1] == "exit":
        sys.exit(0)
    time.sleep(300)
""")


@pytest.mark.parametrize("ending", ["sigkill", "exit"])
def test_jobs_die_with_their_owner(tmp_path: Path, leaks, child_env, ending: str) -> None:
    (tmp_path / "owner.py").write_text(OWNER)
    owner = subprocess.Popen([PY, str(tmp_path / "owner.py"), ending], stdout=subprocess.PIPE, env=child_env,
                             cwd=str(tmp_path))
    try:
        info = json.loads(owner.stdout.readline())
        if ending == "sigkill":
            # shellsup x3, bash x3, the setsid daemon, the ignorer's two sleeps, two more sleeps
            leaks.wait_for(9, deadline=DEADLINE)
            owner.send_signal(signal.SIGKILL)
        assert owner.wait(timeout=DEADLINE) == (-signal.SIGKILL if ending == "sigkill" else 0)
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()
    started = time.monotonic()
    poll(lambda: not leaks.survivors(), what="every process of every job gone")
    took = time.monotonic() - started
    print(f"owner {ending}: every job process gone {took:.2f}s after the owner")
    if ending == "sigkill":
        # With the owner gone nobody waits for a graceful end: the TERM-ignorer's
        # job (grace 5 s) is killed at once, not after its grace.
        assert took < 2.5, f"a job outlived its SIGKILLed owner by {took:.2f}s"
    for spill in info["spill"]:
        if ending == "exit":
            assert not os.path.exists(Path(spill).parent)  # atexit removed the binding's spill directories
        else:
            assert os.path.isdir(spill)  # a killed owner cannot clean up: the files stay, private
            os.system(f"rm -rf '{Path(spill).parent}'")


# -- 4. wait_for: the job exits first, or time runs out -------------------------------------------------


def test_wait_for_on_a_job_that_exits_raises_at_once() -> None:
    job = shell.start("echo starting; echo 'no config file' >&2; exit 3")
    with pytest.raises(JobError) as info:
        job.wait_for(pattern="ready", timeout=DEADLINE * 5)
    err = info.value
    assert not isinstance(err, JobTimeoutError) and err.category == "job_exited"
    assert "exit code 3" in str(err) and "no config file" in str(err) and "starting" in str(err)
    assert err.result is not None and err.result["exitCode"] == 3
    with pytest.raises(JobError, match="exit code 3"):
        job.wait_for(port=free_port(), timeout=DEADLINE)
    job.close()


def test_wait_for_pattern_seen_before_the_exit_is_ready() -> None:
    job = shell.start("echo 'listening on port 4321'; exit 0")
    m = job.wait_for(pattern=r"port (\d+)", timeout=DEADLINE)
    assert m is not None and m.group(1) == "4321"
    assert job.wait()["exitCode"] == 0
    job.close()


def test_wait_for_timeout_leaves_the_job_running() -> None:
    job = shell.start("sleep 300", grace=0)
    try:
        with pytest.raises(JobTimeoutError) as info:
            job.wait_for(pattern="never printed", timeout=1)
        assert isinstance(info.value, TimeoutError) and info.value.category == "timeout"
        assert job.running and not gone(job.bash_pid)
        with pytest.raises(JobTimeoutError):
            job.wait(timeout=0.1)
        assert job.running
    finally:
        result = job.kill()
    assert result["cancelled"] and result.cleanup["stragglers"] == []


def test_kill_grace_zero_kills_a_term_ignorer_at_once() -> None:
    job = shell.start("trap '' TERM; echo ready; sleep 300", grace=60)
    job.wait_for(pattern="ready", timeout=DEADLINE)
    result = job.kill(grace=0)  # without the shortening, the ignorer would hold the cleanup for 60 s
    assert result["cancelled"] and result.cleanup["killed"] >= 1 and result.cleanup["stragglers"] == []
    assert result.cleanup["ms"] < 60_000
    job.close()


def test_context_manager_kills_and_cleans() -> None:
    with shell.start("sleep 300") as job:
        assert job.running
        spill = job.spill
    assert not job.running and not os.path.exists(spill) and gone(job.bash_pid)


def test_lifetime_expiry_is_a_timeout() -> None:
    job = shell.start("echo up; sleep 300", lifetime=0.5, grace=0)
    result = job.wait(timeout=DEADLINE)
    assert result["timedOut"] is True and result["cancelled"] is False
    assert result["stdout"] == "up\n"
    job.close()


# -- asyncio -----------------------------------------------------------------------------------------------


def test_async_flavour() -> None:
    async def main():
        job = await shell.start_async("echo ready; sleep 300", grace=0)
        m = await job.wait_for_async(pattern="ready", timeout=DEADLINE)
        assert m.group(0) == "ready"
        assert await job.ports_async() == []  # sleep listens on nothing
        with pytest.raises(JobTimeoutError):
            await job.wait_async(timeout=0.1)
        assert job.running
        result = await job.kill_async()
        assert result["cancelled"] and await job.wait_async() is result
        job.close()
        short = await shell.start_async("exit 5")
        assert (await short.wait_async(timeout=DEADLINE))["exitCode"] == 5
        short.close()

    asyncio.run(main())


# -- bad input: refused with the value quoted, nothing spawned ---------------------------------------------


@pytest.mark.parametrize("lifetime, shown", [
    (0, "(got 0)"), (-1, "(got -1)"), (604801, "(got 604801)"), (float("nan"), "(got nan)"),
    (float("inf"), "(got inf)"), (True, "True of type bool"), ("1h", '"1h" of type str'),
])
def test_bad_lifetime_refused(no_spawn, lifetime, shown) -> None:
    with pytest.raises(ShellsupError) as info:
        shell.start("true", lifetime=lifetime)
    assert info.value.category == "validation" and shown in str(info.value) and "604800" in str(info.value)


def test_bad_spill_refused(no_spawn, tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    afile = tmp_path / "file"
    afile.write_text("x")
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    cases = [
        (missing, "does not exist"), (afile, "is not a directory"),
        (open_dir, "is writable by group or others (mode 0777)"), (link, "is a symbolic link"),
    ]
    for path, why in cases:
        with pytest.raises(ShellsupError) as info:
            shell.start("true", spill=str(path))
        assert info.value.category == "validation"
        assert f'"{path}"' in str(info.value) and why in str(info.value)
    with pytest.raises(ShellsupError, match=r'spill_max .*\(got "lots"\)'):
        shell.start("true", spill_max="lots")


@pytest.mark.parametrize("spill_max, kept", [("1T", b"hello\n"), ("64MiB", b"hello\n"), ("3", b"hel"), (0, b"")])
def test_spill_max_as_run_takes_it(tmp_path: Path, spill_max, kept) -> None:
    """start() checks spill_max with run()'s check (shellsup's --spill-max rule)."""
    spill = tmp_path / "spill"
    spill.mkdir(mode=0o700)
    job = shell.start("echo hello", spill=spill, spill_max=spill_max)
    assert job.wait(timeout=DEADLINE)["exitCode"] == 0
    assert (Path(job.spill) / "stdout").read_bytes() == kept
    job.close()


@pytest.mark.parametrize("spill_max, shown", [(-1, "(got -1)"), ("-1", '(got "-1")'), ("12X", '(got "12X")'),
                                              (2.5, "(got 2.5 of type float)")])
def test_bad_spill_max_refused(no_spawn, spill_max, shown) -> None:
    with pytest.raises(ShellsupError) as info:
        shell.start("true", spill_max=spill_max)
    assert info.value.category == "validation" and "spill_max must be" in str(info.value) and shown in str(info.value)


def test_bad_wait_for_arguments_refused() -> None:
    with shell.start("sleep 300", grace=0) as job:
        for kwargs, text in [
            ({"pattern": "(unclosed"}, 'pattern "(unclosed" is not a valid regular expression'),
            ({"port": 0}, "(got 0)"), ({"port": 65536}, "(got 65536)"), ({"port": -1}, "(got -1)"),
            ({"port": "80"}, '(got "80")'), ({"url": "ftp://x/"}, '(got "ftp://x/")'),
            ({}, "needs a pattern, a port or a url"),
            ({"pattern": "x", "timeout": -1}, "(got -1)"),
        ]:
            with pytest.raises(ShellsupError) as info:
                job.wait_for(**kwargs)
            assert info.value.category == "validation" and text in str(info.value), kwargs
        assert job.running


FORKING_OWNER = textwrap.dedent("""
    import json, os, sys, time
    import shellsup as shell
    job = shell.start("sleep 300", grace=0)
    child = os.fork()
    if child == 0:  # a forked child outliving the owner must not keep the job alive
        try:
            job.wait(timeout=0)
            seen = {"refused": None}
        except shell.ShellsupError as exc:
            seen = {"refused": str(exc), "jobs": len(shell.jobs())}
        with open(sys.argv[1] + ".tmp", "w") as f:
            json.dump(seen, f)
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(120)
        os._exit(0)
    print(json.dumps({"shellsup": job.pid, "bash": job.bash_pid, "fork": child}), flush=True)
    time.sleep(300)
""")


def test_a_forked_child_does_not_keep_a_job_alive(tmp_path: Path, leaks, child_env) -> None:
    (tmp_path / "owner.py").write_text(FORKING_OWNER)
    report = tmp_path / "forked.json"
    owner = subprocess.Popen([PY, str(tmp_path / "owner.py"), str(report)], stdout=subprocess.PIPE, env=child_env)
    try:
        info = json.loads(owner.stdout.readline())
        poll(report.exists, what="the forked child's report")
        forked = json.loads(report.read_text())
        assert forked["refused"] is not None and "belongs to the process that started it" in forked["refused"] and forked["jobs"] == 0
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=DEADLINE)
        poll(lambda: gone(info["shellsup"]) and gone(info["bash"]), what="the job gone while the fork lives")
        assert not gone(info["fork"])
        leaks.kill([p for p in leaks.survivors() if p.pid == info["fork"]])
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()


def test_start_refuses_a_timeout_and_unknown_keywords(no_spawn) -> None:
    with pytest.raises(ShellsupError, match=r"a job has a lifetime, not a timeout: use lifetime= \(got timeout=5\)"):
        shell.start("true", timeout=5)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'bogus'"):
        shell.start("true", bogus=1)


def test_start_takes_runs_shell_options(tmp_path: Path) -> None:
    job = shell.start("shopt -q login_shell && echo login || echo no-login; echo token ghp_" + "a" * 36,
                      no_login=True, redact=True, workspace=str(tmp_path))
    result = job.wait(timeout=DEADLINE)
    assert result["stdout"].startswith("no-login\n") and "ghp_" + "a" * 36 not in result["stdout"]
    assert result["cwd"] == str(tmp_path)  # cwd None means the workspace
    assert "ghp_" + "a" * 36 in job.read().stdout  # the spill keeps the raw bytes, unredacted
    job.close()


def test_jobs_lists_live_jobs_only() -> None:
    a = shell.start("sleep 300", grace=0, name="a")
    b = shell.start("exit 0", name="b")
    try:
        b.wait(timeout=DEADLINE)
        assert a in shell.jobs() and b not in shell.jobs()
        assert repr(a) == f"<shellsup.Job 'a' pid={a.pid} running>"
    finally:
        a.kill()
        a.close()
        b.close()
    assert a not in shell.jobs()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root and runuser to act as nobody")
def test_spill_dir_not_writable_refused(child_env) -> None:
    spill = tempfile.mkdtemp(dir="/tmp")  # root's, mode 0755 below: nobody may enter it but not write
    try:
        os.chmod(spill, 0o755)
        check = (f"import shellsup as shell\ntry:\n    shell.start('true', spill={spill!r})\n"
                 "except shell.ShellsupError as e:\n    print(e.category, e)\n")
        out = subprocess.run(["runuser", "-u", "nobody", "--", PY, "-c", check], env=child_env,
                             capture_output=True, text=True, timeout=DEADLINE, cwd="/")
        assert out.stdout.strip() == f'validation spill directory "{spill}" is not writable', out.stderr
    finally:
        os.rmdir(spill)
