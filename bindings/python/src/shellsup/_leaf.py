"""Killing the cgroup leaf of a shellsup that died without reporting.

In the cgroup tier the start frame names the run's leaf directory. If
shellsup is then killed (SIGKILL, the OOM killer), its tree stays in the
leaf. Once shellsup is reaped its leaf is stale (named after a shellsup
that is gone), and ``shellsup sweep --cgroup PARENT`` — the binary's one
implementation, which the Go binding calls too — writes 1 to its
cgroup.kill, waits for ``populated 0`` and removes it, with any other
stale leaf there, so that nothing is left even before the next shellsup
start sweeps. A shellsup killed before its start frame (a command can
SIGKILL it that soon) named no leaf: plain ``shellsup sweep`` sweeps the
parent it would have used, that leaf among the stale ones.
"""

from __future__ import annotations

import os
import subprocess
from typing import Dict, List, Optional, Tuple

from . import _pin

SWEEP_WAIT = 5.0  # seconds shellsup sweep may take


def sweep(binary: str, env: Optional[Dict[str, str]]) -> str:
    """Run ``shellsup sweep`` once shellsup has been reaped (a zombie's leaf is not
    stale yet); say what it did."""
    failed, text = _run_sweep([binary, "sweep"], env)
    if failed:
        return f"the binding ran shellsup sweep, which failed ({failed}): {text}"
    if text == "no stale leaves":
        return "the binding ran shellsup sweep: no cgroup leaf was left (no cgroup tier, or nothing ran in it)"
    return f"the binding ran shellsup sweep: {text}"


def kill(path: str, binary: str = "shellsup", env: Optional[Dict[str, str]] = None) -> str:
    """Kill every process in the (stale) leaf at path and remove it, by
    ``shellsup sweep`` of its parent, once shellsup has been reaped; say what happened."""
    if not (os.path.isabs(path) and os.path.basename(path).startswith("shellsup-")
            and os.path.normpath(path) == path):
        return f"its cgroup {path!r} is not a shellsup leaf, so the binding left it alone"
    if not os.path.isdir(path):
        return f"its cgroup leaf {path} was already gone"
    failed, text = _run_sweep([binary, "sweep", "--cgroup=" + os.path.dirname(path)], env)
    mine = [line for line in text.split("; ") if line.endswith(f" {path} and removed it")]
    if os.path.isdir(path):
        return f"the binding ran shellsup sweep for its cgroup leaf {path}, which is left ({failed or 'exit 0'}): {text}"
    if not mine:
        return f"its cgroup leaf {path} was already gone (another shellsup's sweep removed it)"
    count = mine[0].split(" in ")[0]  # "killed N processes"
    return (f"the binding killed every process in its cgroup leaf {path} and removed it (shellsup sweep {count}): "
            "nothing is left in the leaf (a process the command moved out of it, where its cgroup allowed that: "
            "root, or the owner of a delegated cgroup, is not reached; pidns=True holds such a process too)")


def _run_sweep(argv: List[str], env: Optional[Dict[str, str]]) -> Tuple[str, str]:
    """Why shellsup sweep failed ("" when it did not) and its lines, joined by "; "."""
    try:
        done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=SWEEP_WAIT, check=False, **_pin.spawn_kwargs(argv[0]))
    except (OSError, subprocess.SubprocessError) as exc:
        return f"it could not run: {exc}", ""
    text = (done.stdout + done.stderr).decode("utf-8", "replace").replace("shellsup: sweep: ", "")
    failed = f"exit {done.returncode}" if done.returncode != 0 else ""
    return failed, "; ".join(line for line in text.splitlines() if line.strip())
