"""shellsup runs in a process group of its own, so a command that stops it cannot get Python killed.

The command runs as Python's user and can stop shellsup (kill -STOP $PPID).
If shellsup shared Python's process group and that group became orphaned
(Python started in the background by a shell that has since exited), the
kernel would send the whole group SIGHUP then SIGCONT (kernel/exit.c,
kill_orphaned_pgrp: an orphaned group with a stopped member), and Python
dies of SIGHUP. The reproduction builds such a group with real processes.
"""

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest

import shellsup as shell

# One program (a file: argv[0]) plays every role of the reproduction, chosen by
# argv[1]; argv[2] is the directory of the files they leave. Each role starts the next one:
#
#   keeper K   a child subreaper, in the test's session: the harness's parent
#              once the link has exited, outside the harness's session; it
#              reaps the harness and reports how it ended
#   leader L   a session leader (start_new_session): nothing reaches the
#              test's own process group or session
#   link   T   in a new process group P of L's session; it exits once the
#              harness's shellsup is stopped, orphaning P
#   harness H  in P (a plain fork of T): runs a command that stops shellsup,
#              with a short watchdog margin, and writes what run() did to a
#              file (its stdout would be a pipe to nobody)
ROLES = r"""
import ctypes, os, signal, subprocess, sys, time
signal.alarm(60)
role, d = sys.argv[1], sys.argv[2]

def start(next_role, **kw):
    return subprocess.Popen([sys.executable, sys.argv[0], next_role, d], **kw)

def write(name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)

def stopped_children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if fields[1] == str(pid).encode() and fields[0] in (b"T", b"t"):
            found.append(int(entry))
    return found

if role == "keeper":
    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"keeper: prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")
    leader = start("leader", start_new_session=True)
    if leader.wait() != 0:
        sys.exit(f"keeper: the leader ended with {leader.returncode}")
    harness = int(open(os.path.join(d, "harness.pid")).read())
    while True:  # the harness, and on failure the shellsup it left, are orphans of ours now
        pid, status = os.waitpid(-1, 0)
        if pid == harness:
            break
    if os.WIFSIGNALED(status):
        print(f"harness killed by {signal.Signals(os.WTERMSIG(status)).name}", flush=True)
    else:
        print(f"harness exited {os.WEXITSTATUS(status)}", flush=True)
elif role == "leader":
    link = start("link", preexec_fn=lambda: os.setpgid(0, 0))  # single-threaded: preexec_fn is safe
    sys.exit(link.wait())
elif role == "link":
    harness = start("harness")
    write("harness.pid", str(harness.pid))
    end = time.monotonic() + 30
    while not stopped_children(harness.pid):
        if time.monotonic() > end:
            sys.exit(f"link: the harness (pid {harness.pid}) had no stopped child within 30 s")
        time.sleep(0.01)
    write("link.txt", f"shellsup stopped; harness pgid {os.getpgid(harness.pid)}, link pgid {os.getpgid(0)}")
    os._exit(0)  # without waiting for the harness: it outlives the link
elif role == "harness":
    import shellsup as shell
    from shellsup import _limits
    _limits.WATCHDOG_MARGIN = 3.0  # the link has this long to exit while shellsup is stopped
    try:
        shell.run("setsid sleep 300 & sleep 300 & kill -STOP $PPID; sleep 300", timeout=1, grace=0, progress=None)
        write("outcome.txt", "run returned a result")
    except shell.ShellsupError as exc:
        write("outcome.txt", f"run raised {type(exc).__name__}: {exc}")
"""


def test_a_stopped_shellsup_in_an_orphaned_group_spares_python(leaks, child_env, tmp_path):
    roles = tmp_path / "roles.py"
    roles.write_text(textwrap.dedent(ROLES))
    keeper = subprocess.Popen([sys.executable, str(roles), "keeper", str(tmp_path)],
                              env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = keeper.communicate(timeout=90)
    finally:
        if keeper.poll() is None:
            keeper.kill()
            keeper.wait()
    assert keeper.returncode == 0, (out, err)
    print((tmp_path / "link.txt").read_text())
    assert out == "harness exited 0\n", \
        f"{out.strip()}: the orphaned group with the stopped shellsup was sent SIGHUP\n{err}"
    outcome = (tmp_path / "outcome.txt").read_text()
    assert outcome.startswith("run raised ShellsupError: protocol:"), outcome
    assert "(it was stopped)" in outcome, outcome  # stopped until the watchdog: nothing else resumed it
    assert "the binding sent it SIGCONT" in outcome, outcome
    assert "its cleanup had finished with nothing left" in outcome, outcome
    assert leaks.survivors() == []


class Seen(Exception):
    pass


def _shellsup_children():
    """Pids of this process's children named shellsup."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.find(b"(") + 1:stat.rfind(b")")]
        fields = stat[stat.rfind(b")") + 2:].split()
        if comm == b"shellsup" and int(fields[1]) == os.getpid():
            found.append(int(entry))
    return found


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_shellsup_runs_in_a_process_group_of_its_own(leaks, mode):
    seen = []

    def progress(stream, text):
        if "ready" in text:
            seen.extend((pid, os.getpgid(pid), os.getsid(pid)) for pid in _shellsup_children())
            raise Seen()

    with pytest.raises(Seen):
        if mode == "sync":
            shell.run("echo ready; sleep 300", timeout=30, progress=progress)
        else:
            asyncio.run(shell.run_async("echo ready; sleep 300", timeout=30, progress=progress))
    assert len(seen) == 1, seen
    pid, group, session = seen[0]
    assert group == pid, "shellsup leads its own process group"
    assert group != os.getpgrp(), "not Python's process group"
    if sys.version_info >= (3, 11):
        assert session == os.getsid(0), "in Python's session (process_group=0)"
    else:
        assert session == pid, "a session of its own before 3.11 (start_new_session)"
    assert leaks.survivors() == []
