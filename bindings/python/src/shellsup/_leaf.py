"""Killing the cgroup leaf of a shellsup that died without reporting.

In the cgroup tier the start frame names the run's leaf directory. If
shellsup is then killed (SIGKILL, the OOM killer), its tree stays in the
leaf; the binding writes 1 to the leaf's cgroup.kill, waits for
``populated 0`` and removes the leaf, so that nothing is left even before
the next shellsup start sweeps stale leaves. A shellsup killed before its
start frame (a command can SIGKILL it that soon) named no leaf: the binding
runs ``shellsup sweep``, which kills and removes every stale leaf, that
one among them.
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import Dict, Optional

POPULATED_WAIT = 1.0  # seconds to wait for the leaf to empty after cgroup.kill
SWEEP_WAIT = 5.0  # seconds shellsup sweep may take


def sweep(binary: str, env: Optional[Dict[str, str]]) -> str:
    """Run ``shellsup sweep`` once shellsup has been reaped (a zombie's leaf is not
    stale yet); say what it did."""
    try:
        done = subprocess.run([binary, "sweep"], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=SWEEP_WAIT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the binding could not run shellsup sweep: {exc}"
    text = (done.stdout + done.stderr).decode("utf-8", "replace").replace("shellsup: sweep: ", "")
    text = "; ".join(line for line in text.splitlines() if line.strip())
    if done.returncode != 0:
        return f"the binding ran shellsup sweep, which failed (exit {done.returncode}): {text}"
    if text == "no stale leaves":
        return "the binding ran shellsup sweep: no cgroup leaf was left (no cgroup tier, or nothing ran in it)"
    return f"the binding ran shellsup sweep: {text}"


def kill(path: str) -> str:
    """Kill every process in the leaf at path and remove it; say what happened."""
    if not _is_leaf(path):
        return f"its cgroup {path!r} is not a shellsup leaf, so the binding left it alone"
    try:
        with open(os.path.join(path, "cgroup.kill"), "w") as f:
            f.write("1")
    except FileNotFoundError:
        return f"its cgroup leaf {path} was already gone"
    except OSError as exc:
        return f"the binding could not kill its cgroup leaf {path}: {exc}"
    emptied = _wait_empty(path, time.monotonic() + POPULATED_WAIT)
    if not emptied:
        return f"the binding killed its cgroup leaf {path}, but it still held processes {POPULATED_WAIT:g} s later"
    removed = _rmdir(path, time.monotonic() + POPULATED_WAIT)
    tail = "and removed it" if removed else "(the next shellsup start removes it)"
    return f"the binding killed every process in its cgroup leaf {path} {tail}: nothing is left in the leaf (a process the command moved out of it, where its cgroup allowed that: root, or the owner of a delegated cgroup, is not reached; pidns=True holds such a process too)"


def _is_leaf(path: str) -> bool:
    """Only a directory named by shellsup inside a cgroup2 mount is ever touched."""
    return (
        os.path.isabs(path)
        and os.path.basename(path).startswith("shellsup-")
        and os.path.isfile(os.path.join(path, "cgroup.kill"))
        and ".." not in path.split(os.sep)
    )


def _populated(path: str) -> bool:
    try:
        with open(os.path.join(path, "cgroup.events")) as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "populated":
                    return value.strip() != "0"
    except FileNotFoundError:
        return False
    return True


def _wait_empty(path: str, deadline: float) -> bool:
    while _populated(path):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def _rmdir(path: str, deadline: float) -> bool:
    while True:
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)  # EBUSY while the last exits are accounted
