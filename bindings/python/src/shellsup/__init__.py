"""Run one shell command under shellsup, a drop-in for the kernel ``shell`` skill.

::

    import shellsup as shell

    result = shell.run("make test", cwd="/src", timeout=300)
    result["exitCode"], result["stdout"]

``run`` executes ``/bin/bash -lc COMMAND`` through the ``shellsup`` binary,
which streams the output back and, when the command finishes, times out or
is cancelled, kills and reaps every process the command started — background
jobs, ``setsid`` daemons, double forks — before the call returns. The result
is a dict with the 13 keys of the skill. ``run_async`` is the asyncio
variant; cancelling its task cancels the run.

Guarantee: when ``run`` or ``run_async`` returns or raises after shellsup
started, shellsup has reported the end of its cleanup, or the binding has
given up after bounded waits (and says so on the exception). Sandboxing is
opt-in (``sandbox=``, ``network=False``; docs/sandbox.md): without it the
command runs with this process's permissions. Work
handed to daemons (``systemd-run``, an existing ``tmux`` server, ``at``) is
not a descendant and is not stopped.
"""

from __future__ import annotations

import dataclasses
import sys
import os
from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence, Tuple, Union

from ._async import AsyncRun
from ._errors import CleanupError, ShellsupError
from ._find import find_binary
from ._interactive import check_interactive
from ._pin import pinned_binary
from ._job import Job, JobError, JobTimeoutError, Output, jobs, start, start_async
from ._limits import DEFAULT_BUDGET, DEFAULT_TIMEOUT
from ._progress import default_progress, print_progress
from ._result import RESULT_KEYS, SkillResult
from ._run import Run
from ._validate import PathLike, check_progress, request
from ._version import __version__

__all__ = [
    "RESULT_KEYS",
    "CleanupError",
    "Job",
    "JobError",
    "JobTimeoutError",
    "Output",
    "ShellsupError",
    "SkillResult",
    "__version__",
    "find_binary",
    "jobs",
    "print_progress",
    "run",
    "run_async",
    "start",
    "start_async",
]

Progress = Optional[Callable[[str, str], Any]]


def run(
    command: str,
    cwd: Optional[str] = None,
    timeout: Optional[Union[int, float]] = DEFAULT_TIMEOUT,
    *,
    progress: Progress = print_progress,
    env: Optional[Mapping[str, str]] = None,
    budget: Optional[int] = DEFAULT_BUDGET,
    grace: Optional[Union[int, float]] = None,
    max_procs: Optional[int] = None,
    max_memory: Optional[Union[int, str]] = None,
    pidns: Optional[bool] = None,
    user: Optional[str] = None,
    no_login: bool = False,
    scrub_env: bool = False,
    agent_env: bool = False,
    env_allow: Optional[Sequence[str]] = None,
    workspace: Optional[PathLike] = None,
    redact: bool = False,
    redact_patterns: Optional[Sequence[str]] = None,
    spill: Optional[PathLike] = None,
    spill_max: Optional[Union[int, str]] = None,
    capture: Optional[str] = None,
    agent: bool = False,
    sandbox: Optional[str] = None,
    protect: Optional[Sequence[PathLike]] = None,
    network: bool = True,
    tidy: bool = False,
    pty: bool = False,
    pty_size: Optional[Tuple[int, int]] = None,
    idle_timeout: Optional[Union[int, float]] = None,
) -> SkillResult:
    """Run ``/bin/bash -lc command`` under shellsup and return its SkillResult.

    Every argument after ``timeout`` is keyword-only.

    command: the bash ``-c`` string, non-empty, at most 131071 bytes of UTF-8
        (the kernel's per-argument limit, 128 KiB with the NUL).
    cwd: working directory; None means the current one. Relative paths are
        resolved against the current directory; symbolic links are kept.
    timeout: seconds, an int or float, greater than 0 and at most 600; None
        means the default, 120. When it fires, the result has ``timedOut``
        True.
    progress: called as ``progress(stream, text)`` with each captured text
        as it arrives (``stream`` is ``"stdout"`` or ``"stderr"``). The
        default writes it to sys.stdout/sys.stderr; None turns it off. If it
        raises, the run is cancelled and cleaned up, then the exception
        propagates. Progress stops where the budget is spent (the
        truncation marker is its last text), although the command may go
        on: the default then prints one line on sys.stderr saying that the
        rest of the output is neither captured nor shown, and that
        ``capture="head+tail"`` keeps its end (a long ``make test`` keeps
        its failures that way; ``spill=`` keeps every byte).
    env: None inherits ``os.environ``; a mapping *replaces* the environment
        entirely (as in subprocess), for shellsup and the command alike.
        Without ``HOME`` the command gets ``HOME=/nonexistent``, never the
        home (and profile) of this process's user from the password database.
    budget: capture budget in bytes, shared by stdout and stderr (52 to
        524288); None means the default, 65536.
    grace: seconds between SIGTERM and SIGKILL at cleanup (0 to 60); None
        means shellsup's default, 2.
    max_procs: at most this many processes and threads at once (pids.max);
        None means no limit.
    max_memory: memory cap with no swap (memory.max), in bytes or as "64M"
        (powers of 1024), at least 4 MiB; None means no limit. A limit that
        the host cannot enforce raises ShellsupError with category
        ``"containment_unavailable"``: it is never dropped silently.
    pidns: True runs the command under an init of its own PID namespace
        (shellsup --pidns): if shellsup dies for any reason, the kernel kills
        every process of the command. Where the namespaces cannot be made,
        ShellsupError with category "containment_unavailable". None (the
        default) does so only where shellsup makes no cgroup v2 leaf (e.g.
        an unprivileged user with no delegated cgroup), or one the
        unprivileged command could leave (a delegated cgroup), and the
        namespaces can be had (shellsup --pidns-auto); else the run goes on in the
        tiers it has. False never does: in the subreaper tier alone, a
        command that kills shellsup can leave daemons running (README,
        "Tiers"). The result's ``cleanup["tier"]`` says which it was.
    user: ``"USER"`` or ``"USER:GROUP"`` (names or numeric ids) runs the
        command as that user (shellsup --user): the user's groups from
        /etc/group, or only GROUP; HOME (the passwd entry's, else
        /nonexistent), USER and LOGNAME set; no capabilities, no_new_privs.
        The command can then neither raise its limits nor signal shellsup
        nor read this process's environment. shellsup must run as root or
        with CAP_SETUID, CAP_SETGID and CAP_KILL, else ShellsupError with category
        "containment_unavailable"; an unknown user is a "validation" error.

    The shell and environment (README, "The command's environment"), each
    off by default:

    no_login: ``/bin/bash --norc -c`` instead of the login shell
        ``bash -lc``: no profile or rc file is read.
    scrub_env: drop the variables whose names mark credentials
        (``*_TOKEN``, ``AWS_*``, ...) from the command's environment.
    agent_env: set ``PAGER=cat``, ``GIT_PAGER=cat``, ``NO_COLOR=1``,
        ``TERM=dumb`` and the rest of the README's list.
    env_allow: a list of variable names (or prefixes ending in ``*``,
        ``"LC_*"``; case-sensitive): the command gets only those plus PATH,
        HOME, LANG, LC_*, TERM, TZ, USER, LOGNAME, SHELL and TMPDIR
        (shellsup --env-allow). With scrub_env, a name listed exactly passes
        even if it looks like a credential; one passed by a prefix or the
        base is still scrubbed; agent_env's settings are added after it;
        with user, HOME, USER and LOGNAME are the user's. None or ``[]``:
        no allow-list. A bad name (empty, ``"*"`` alone or not at the end,
        containing ``=``, ``,``, whitespace, a control character or NUL)
        raises ShellsupError "validation" quoting it.
    workspace: a directory the working directory must be, or lie below,
        with symbolic links followed (else ShellsupError "validation"
        quoting both); cwd None then means the workspace.

    The output (shellsup's ``--redact``, ``--spill``, ``--capture``):

    redact: replace secrets (common token shapes) in the captured text and
        progress. redact_patterns: a list of regular expressions (Go's
        syntax, checked by shellsup) replaced too; implies redact.
    spill: a directory where shellsup keeps every raw byte of both streams,
        beyond the budget. spill_max bounds each file: bytes (an int, at
        least 0; 0 keeps none) or a "64M"-style string (K, M, G, T, powers
        of 1024), as shellsup's --spill-max; None means shellsup's default,
        256 MiB. It needs spill.
    capture: what the result keeps past the budget: ``"head"`` (None, the
        default), ``"tail"`` or ``"head+tail"``.
    tidy: tidy the captured text and progress (shellsup --tidy,
        docs/tidy.md): escape sequences and controls removed, carriage
        returns applied (a redrawn progress line keeps its final state),
        runs of identical lines folded, a binary stream replaced by one
        line. The budget counts the tidied text; spill files keep the raw
        bytes. ``result.streams`` says, per stream, what was tidied away.

    agent: one switch for an agent harness's defaults (shellsup
        ``--agent``): agent_env, scrub_env, tidied output and capture
        ``"head+tail"``; still a login shell. A capture given as well wins.
        To leave out another part, pass the parts wanted one by one instead
        (``scrub_env=False`` cannot be told from not passing it).
    The sandbox, off by default:

    sandbox: what the command may write (shellsup --sandbox,
        docs/sandbox.md): ``"read-only"`` (only a private TMPDIR, 0700,
        removed at cleanup, and /dev/null-like devices), ``"workspace-write"``
        (also workspace=, which it needs) or ``"none"``/None. The kernel
        (Landlock) enforces it on every process of the command; where it
        cannot, ShellsupError "containment_unavailable" and nothing runs.
    protect: with ``"workspace-write"``, directories of the workspace kept
        read-only (relative to it, or absolute).
    network: False gives the command a network of its own with only
        loopback up (shellsup --no-network; unprivileged too, in the PID
        namespace the default ``pidns`` gives such a run); where no
        namespace can be made (unprivileged with ``pidns=False``, say),
        Landlock TCP rules and a seccomp filter deny every TCP connect and
        bind, Multipath TCP and Fast Open, UDP staying open (the result's
        ``sandbox["network"]`` says which).

    Interactive programs (docs/interactive.md): pty=True runs the command on
    a terminal (pty_size: (cols, rows), default (80, 24)); a program that
    waits for input ends the run at once, cleaned up, with
    ``result.status`` ``"needs_input"`` and its prompt on ``result.prompt``.
    idle_timeout: seconds without output that end the run (``result.status``
    ``"idle"``, ``result.idle`` True, ``timedOut`` False).

    Non-zero exits, timeouts and cancellations are results. Raises
    ShellsupError for a run that cannot happen or whose end shellsup did not
    report (``category`` says why); the arguments are checked before
    anything is spawned. Raises CleanupError (a ShellsupError, category
    ``"cleanup_incomplete"``, the result on ``.result``) when the cleanup
    left processes alive. On KeyboardInterrupt
    the run is cancelled, its cleanup awaited (bounded), and the interrupt
    re-raised.
    """
    req = request(command, cwd, timeout, budget, grace, env, max_procs, max_memory, pidns, user=user,
                  no_login=no_login,
                  scrub_env=scrub_env, agent_env=agent_env, env_allow=env_allow, workspace=workspace, redact=redact,
                  redact_patterns=redact_patterns, spill=spill, spill_max=spill_max, capture=capture, agent=agent, tidy=tidy,
                  sandbox=sandbox, protect=protect, network=network)
    req = dataclasses.replace(req, interactive=check_interactive(pty, pty_size, False, idle_timeout, run=True))
    progress = check_progress(progress)
    progress = default_progress(progress, capture)
    runner = Run(req, pinned_binary(), progress)
    runner.start()
    return runner.wait()


async def run_async(
    command: str,
    cwd: Optional[str] = None,
    timeout: Optional[Union[int, float]] = DEFAULT_TIMEOUT,
    *,
    progress: Union[Progress, Callable[[str, str], Awaitable[Any]]] = print_progress,
    env: Optional[Mapping[str, str]] = None,
    budget: Optional[int] = DEFAULT_BUDGET,
    grace: Optional[Union[int, float]] = None,
    max_procs: Optional[int] = None,
    max_memory: Optional[Union[int, str]] = None,
    pidns: Optional[bool] = None,
    user: Optional[str] = None,
    no_login: bool = False,
    scrub_env: bool = False,
    agent_env: bool = False,
    env_allow: Optional[Sequence[str]] = None,
    workspace: Optional[PathLike] = None,
    redact: bool = False,
    redact_patterns: Optional[Sequence[str]] = None,
    spill: Optional[PathLike] = None,
    spill_max: Optional[Union[int, str]] = None,
    capture: Optional[str] = None,
    agent: bool = False,
    sandbox: Optional[str] = None,
    protect: Optional[Sequence[PathLike]] = None,
    network: bool = True,
    tidy: bool = False,
    pty: bool = False,
    pty_size: Optional[Tuple[int, int]] = None,
    idle_timeout: Optional[Union[int, float]] = None,
) -> SkillResult:
    """The asyncio variant of run(), with the same parameters and result.

    Cancelling the awaiting task — as often as it happens, including
    ``asyncio.run`` cancelling every task at shutdown — sends shellsup a
    cancel, waits for its cleanup (bounded), and re-raises CancelledError.
    Several runs may proceed concurrently in one event loop. progress may
    also be a coroutine function; it is awaited before the next frame is
    taken.
    """
    req = request(command, cwd, timeout, budget, grace, env, max_procs, max_memory, pidns, user=user,
                  no_login=no_login,
                  scrub_env=scrub_env, agent_env=agent_env, env_allow=env_allow, workspace=workspace, redact=redact,
                  redact_patterns=redact_patterns, spill=spill, spill_max=spill_max, capture=capture, agent=agent, tidy=tidy,
                  sandbox=sandbox, protect=protect, network=network)
    req = dataclasses.replace(req, interactive=check_interactive(pty, pty_size, False, idle_timeout, run=True))
    progress = check_progress(progress)
    progress = default_progress(progress, capture)
    return await AsyncRun(req, pinned_binary(), progress).wait()
