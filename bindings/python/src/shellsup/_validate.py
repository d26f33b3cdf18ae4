"""Checking a run request before anything is spawned.

Every message quotes the bad value and says what is allowed, in the words
shellsup itself uses, so a caller sees the same text whichever side refused.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections import abc
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from . import _limits
from ._errors import VALIDATION, ShellsupError
from ._interactive_opts import Interactive
from ._limits import (
    ARG_LIMIT,
    DEFAULT_BUDGET,
    DEFAULT_SPILL_MAX,
    DEFAULT_GRACE,
    DEFAULT_LIFETIME,
    DEFAULT_TIMEOUT,
    MAX_BYTE_COUNT,
    MAX_COMMAND_BYTES,
    MAX_LIFETIME,
    MIN_SPILL_MAX,
    budget_fits,
    marker,
)

__all__ = ["Deadline", "PathLike", "Request", "ShellOptions", "request", "check_progress", "invalid", "quote", "marker",
           "parse_bytes"]

# What a timeout over the maximum points to, in the binary's words (Go's
# request.LongerThanTimeout).
LONGER_THAN_TIMEOUT = (f"a longer run is a job: give it a lifetime instead (--lifetime, lifetime=, Lifetime) "
                       f"of up to {MAX_LIFETIME} seconds (7 days)")

# A path argument: str, bytes or os.PathLike (run()'s cwd, workspace, spill; start()'s too).
PathLike = Union[str, bytes, "os.PathLike[str]"]


# The values of capture=, as shellsup's --capture takes them.
CAPTURE_MODES = ("head", "tail", "head+tail")


@dataclass(frozen=True)
class ShellOptions:
    """The options that pass straight to shellsup's flags: the shell, the
    environment and the output controls (README, "The command's environment")."""

    no_login: bool = False
    scrub_env: bool = False
    agent_env: bool = False
    env_allow: Tuple[str, ...] = ()  # names or PREFIX*; () means no allow-list
    workspace: Optional[str] = None  # absolute
    redact: bool = False
    redact_patterns: Tuple[str, ...] = ()
    spill: Optional[str] = None  # absolute
    spill_max: Optional[int] = None
    capture: Optional[str] = None
    agent: bool = False  # --agent: an agent harness's defaults; a capture given as well wins
    sandbox: Optional[str] = None  # --sandbox MODE
    protect: Tuple[str, ...] = ()  # --protect DIR, each
    no_network: bool = False  # --no-network
    tidy: bool = False

    def flags(self) -> List[str]:
        """shellsup's flags for these options, in --name=value form (a value
        starting with "-" cannot be read as a flag)."""
        flags = [name for on, name in ((self.no_login, "--no-login"), (self.scrub_env, "--scrub-env"),
                                       (self.agent_env, "--agent-env")) if on]
        if self.env_allow:
            flags.append("--env-allow=" + ",".join(self.env_allow))
        if self.workspace is not None:
            flags.append("--workspace=" + self.workspace)
        if self.redact or self.redact_patterns:
            flags.append("--redact")
        flags += ["--redact-pattern=" + p for p in self.redact_patterns]
        if self.spill is not None:
            flags.append("--spill=" + self.spill)
        if self.spill_max is not None:
            flags.append("--spill-max=" + str(self.spill_max))
        if self.capture is not None:
            flags.append("--capture=" + self.capture)
        if self.agent:
            flags.append("--agent")
        if self.sandbox is not None:
            flags.append("--sandbox=" + self.sandbox)
        flags += ["--protect=" + p for p in self.protect]
        if self.no_network:
            flags.append("--no-network")
        if self.tidy:
            flags.append("--tidy")
        return flags


TIMEOUT = "timeout"  # a call's deadline: run()
LIFETIME = "lifetime"  # a job's: start()


@dataclass(frozen=True)
class Deadline:
    """The one time limit of a run: a call's timeout or a job's lifetime
    (kind), in seconds. shellsup gets exactly one option for it,
    --timeout or --lifetime, and the watchdog measures it alike."""

    kind: str  # TIMEOUT or LIFETIME
    seconds: Union[int, float]

    def flags(self) -> List[str]:
        return ["--" + self.kind, _number(self.seconds)]


@dataclass(frozen=True)
class Request:
    """A validated run request."""

    command: str
    cwd: str  # absolute
    deadline: Deadline
    budget: int
    grace: Optional[Union[int, float]]
    env: Optional[Dict[Union[str, bytes], Union[str, bytes]]]
    max_procs: Optional[int] = None  # --max-procs
    max_memory: Optional[int] = None  # --max-memory, bytes
    pidns: Optional[bool] = None  # True: --pidns; None: --pidns-auto; False: neither
    user: Optional[str] = None  # --user USER[:GROUP]
    options: ShellOptions = ShellOptions()
    interactive: Interactive = Interactive()  # --pty, --stdin pipe, --idle-timeout (docs/interactive.md)

    def argv(self, binary: str) -> List[str]:
        """shellsup's command line in frames mode."""
        args = [binary, "--frames", *self.deadline.flags(), "--cwd", self.cwd, "--budget", str(self.budget)]
        if self.grace is not None:
            args += ["--grace", _number(self.grace)]
        if self.max_procs is not None:
            args += ["--max-procs", str(self.max_procs)]
        if self.max_memory is not None:
            args += ["--max-memory", str(self.max_memory)]
        if self.pidns:
            args.append("--pidns")
        elif self.pidns is None:
            args.append("--pidns-auto")  # a namespace where shellsup makes no cgroup v2 leaf
        if self.user is not None:
            args.append("--user=" + self.user)
        return args + self.options.flags() + self.interactive.flags() + ["--", self.command]

    @property
    def grace_seconds(self) -> float:
        """The grace shellsup will use (its default when None)."""
        return float(DEFAULT_GRACE if self.grace is None else self.grace)


def _number(x: Union[int, float]) -> str:
    # float() and int() first: a subclass (numpy.float64) may repr as "np.float64(0.5)".
    return repr(float(x)) if isinstance(x, float) else str(int(x))


def invalid(message: str) -> ShellsupError:
    return ShellsupError(message, VALIDATION)


def quote(value: Any) -> str:
    """Quote a bad value for a message: strings in double quotes, like shellsup."""
    if isinstance(value, str):
        s = value if len(value) <= 80 else value[:80] + "..."
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    s = repr(value)
    return s if len(s) <= 80 else s[:80] + "..."


def _is_number(x: Any) -> bool:
    # bool is an int subclass but True is not a number of seconds.
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _shown(x: Any) -> str:
    """A number as the caller wrote it: 0, -1, 601, 0.5, nan, inf; a huge int is clipped."""
    s = repr(float(x)) if isinstance(x, float) else str(int(x))
    return s if len(s) <= 80 else f"{s[:40]}...({len(s)} digits)"


def _in_range(x: Union[int, float], low: Union[int, float], high: Union[int, float], low_open: bool) -> bool:
    """low < x <= high (low_open) or low <= x <= high, exactly: an int too large
    for a float is compared as an int, never converted, and NaN is outside."""
    if isinstance(x, float) and math.isnan(x):
        return False
    above = x > low if low_open else x >= low
    return above and x <= high


def check_command(command: Any) -> str:
    if not isinstance(command, str) or command == "":
        got = '""' if command == "" else f"{quote(command)} of type {type(command).__name__}"
        raise invalid(f"command must be a non-empty string (got {got})")
    try:
        size = len(command.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise invalid(f"command must be valid UTF-8 (got {quote(command)}: {exc.reason})") from None
    if size > MAX_COMMAND_BYTES:
        raise invalid(
            f"command is {size} bytes; the kernel passes at most {ARG_LIMIT} bytes "
            "(128 KiB, MAX_ARG_STRLEN, with the NUL) in one argument"
        )
    if "\0" in command:
        raise invalid(f"command must not contain a NUL byte: the kernel ends an argument there (got {quote(command)})")
    return command


def check_number(name: str, value: Any, unit: str, note: str = "") -> Union[int, float]:
    """A number option checked against its entry in the one table (limits.json):
    above its "min" (inclusive) or, without one, above 0 (exclusive), and at
    most its "max", in shellsup's words. A byte count ("bytes") must be a
    whole number, and a budget must hold its marker; note follows the bounds."""
    spec = _limits.LIMITS[name]
    low, low_open, high = spec.get("min", 0), "min" not in spec, spec["max"]
    bounds = f"{'greater than' if low_open else 'at least'} {low} and at most {high}"
    whole = unit == "bytes"
    kind = "a whole number of bytes," if whole else "a number of seconds"
    # bool is an int subclass but True is not a number of seconds.
    if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
        raise invalid(f"{name} must be {kind} {bounds}{note} (got {quote(value)} of type {type(value).__name__})")
    if not _in_range(value, low, high, low_open) or (name == "budget" and not budget_fits(value)):
        longer = f"; {LONGER_THAN_TIMEOUT}" if name == "timeout" and value > high else ""
        raise invalid(f"{name} must be {bounds} {unit}{note} (got {_shown(value)}){longer}")
    return value


def check_timeout(timeout: Any) -> Union[int, float]:
    return DEFAULT_TIMEOUT if timeout is None else check_number("timeout", timeout, "seconds")


def check_lifetime(lifetime: Any) -> Union[int, float]:
    """None (DEFAULT_LIFETIME), or seconds greater than 0 and at most MAX_LIFETIME,
    checked as run() checks a timeout."""
    return DEFAULT_LIFETIME if lifetime is None else check_number("lifetime", lifetime, "seconds", " (7 days)")


def check_deadline(kind: str, seconds: Any) -> Deadline:
    """A timeout (run()) or a lifetime (start()), checked by its own rule."""
    check = check_lifetime if kind == LIFETIME else check_timeout
    return Deadline(kind, check(seconds))


def check_grace(grace: Any) -> Optional[Union[int, float]]:
    return None if grace is None else check_number("grace", grace, "seconds")


def check_budget(budget: Any) -> int:
    return DEFAULT_BUDGET if budget is None else int(check_number("budget", budget, "bytes"))


def check_cwd(cwd: Any) -> str:
    if cwd is None:
        try:
            return os.getcwd()
        except OSError as exc:
            raise invalid(f"cannot determine the current directory to use as cwd: {exc}") from None
    return check_directory("cwd", cwd)


def check_directory(name: str, value: Any, must_exist: bool = True) -> str:
    """A path given as str, bytes or os.PathLike, made absolute lexically
    (symbolic links are kept, as by shellsup and a shell's cd)."""
    try:
        path = os.fspath(value)
    except TypeError:
        raise invalid(f"{name} must be a path or None (got {quote(value)} of type {type(value).__name__})") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if path == "":
        raise invalid(f'{name} must be a directory path or None (got "")')
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid(f"{name} {quote(path)} must be a valid UTF-8 path") from None
    if "\0" in path:
        raise invalid(f"{name} {quote(path)} must not contain a NUL byte")
    absolute = os.path.abspath(path)
    if must_exist and not os.path.exists(absolute):
        raise invalid(f"{name} {quote(path)} does not exist")
    if must_exist and not os.path.isdir(absolute):
        raise invalid(f"{name} {quote(path)} is not a directory")
    return absolute


def check_env(env: Any) -> Optional[Dict[Union[str, bytes], Union[str, bytes]]]:
    if env is None:
        return None
    if not isinstance(env, abc.Mapping):
        raise invalid(f"env must be a mapping or None (got {quote(env)} of type {type(env).__name__})")
    out = {}
    for key, value in env.items():
        if not isinstance(key, (str, bytes)) or not isinstance(value, (str, bytes)):
            raise invalid(f"env must map strings to strings (got {quote(key)}: {quote(value)})")
        k = os.fsencode(key)
        if k == b"" or b"=" in k or b"\0" in k:
            raise invalid(f"env has an invalid variable name {quote(key)}")
        if b"\0" in os.fsencode(value):
            raise invalid(f"env value of {quote(key)} contains a NUL byte")
        out[key] = value
    return out


def check_progress(progress: Any) -> Optional[Callable[[str, str], Any]]:
    if progress is not None and not callable(progress):
        raise invalid(f"progress must be a callable (stream, text) or None (got {quote(progress)})")
    return progress


def check_pidns(pidns: Any) -> Optional[bool]:
    if pidns is not None and not isinstance(pidns, bool):
        raise invalid(f"pidns must be None, True or False (got {quote(pidns)} of type {type(pidns).__name__})")
    return pidns


USER_FORM = "USER or USER:GROUP, each a name or a numeric id (e.g. nobody, 65534, nobody:nogroup)"


def check_user(user: Any) -> Optional[str]:
    """None, or a --user value of the right form (Go's request.ValidateUser):
    a user and an optional group after one colon, each non-empty, without
    whitespace, control characters or NUL bytes. Whether they exist is
    shellsup's to check, in its /etc/passwd and /etc/group."""
    if user is None:
        return None
    if not isinstance(user, str):
        raise invalid(f"user must be {USER_FORM}, or None (got {quote(user)} of type {type(user).__name__})")
    if user == "":
        raise invalid(f'user must be {USER_FORM} (got "")')
    if any(c <= " " or c in "\x7f\ufffd" or "\ud800" <= c <= "\udfff" for c in user):  # Go's badUserRune
        raise invalid(f"user must be {USER_FORM}, without whitespace, control characters or NUL bytes (got {quote(user)})")
    name, colon, group = user.partition(":")
    if name == "" or (colon and (group == "" or ":" in group)):
        raise invalid(f"user must be {USER_FORM} (got {quote(user)})")
    return user


ENV_ALLOW_FORM = ("a variable name, or a prefix ending in * (e.g. MY_VAR, LC_*), without =, commas, "
                  "whitespace, control characters or NUL bytes")


def _bad_env_char(c: str) -> bool:
    # Go's request.badEnvRune, character for character.
    return (c <= " " or c == "\x7f" or "\x80" <= c <= "\x9f" or c in "=,\xa0\u2028\u2029\ufffd"
            or "\ud800" <= c <= "\udfff")


def check_env_allow(names: Any) -> Tuple[str, ...]:
    """None, or a list (or tuple) of allow-list names, each checked as
    shellsup checks an --env-allow name (Go's request.ValidateEnvAllowName):
    not empty, without =, commas, whitespace, control characters or NUL, and
    * only at the end of a prefix, not alone. An empty list is no allow-list."""
    if names is None:
        return ()
    if not isinstance(names, (list, tuple)):
        raise invalid(f"env_allow must be a list of variable names (strings) or None "
                      f"(got {quote(names)} of type {type(names).__name__})")
    for i, n in enumerate(names):
        if not isinstance(n, str):
            raise invalid(f"env_allow[{i}] must be {ENV_ALLOW_FORM} (got {quote(n)} of type {type(n).__name__})")
        if n == "" or any(_bad_env_char(c) for c in n):
            raise invalid(f"env_allow[{i}] must be {ENV_ALLOW_FORM} (got {quote(n)})")
        stem = n[:-1] if n.endswith("*") else n
        if stem == "" or "*" in stem:
            raise invalid(f"env_allow[{i}] must be {ENV_ALLOW_FORM}; * only at the end of a prefix (got {quote(n)})")
    return tuple(names)


MIN_PROCS, MAX_PROCS, MIN_MEMORY = _limits.MIN_PROCS, _limits.MAX_PROCS, _limits.MIN_MEMORY
_UNITS = {"K": 10, "M": 20, "G": 30, "T": 40}
_WHOLE = re.compile(r"[+-]?[0-9]+\Z")
BYTE_COUNT_FORM = 'a whole number of bytes or a string with a K, M, G or T suffix (powers of 1024), e.g. "64M"'


def parse_bytes(value: Any) -> Optional[int]:
    """A byte count as shellsup reads one (Go's request.ParseBytes): an int,
    or a string of a whole number optionally followed by K, M, G or T
    (powers of 1024, any case, then an optional B or iB), from 0 to 2**62.
    None when value is not one; each option applies its own minimum."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        count = value
    elif isinstance(value, str):
        text = value.strip().upper()
        text = text[:-2] if text.endswith("IB") else text
        text = text[:-1] if text.endswith("B") else text
        shift = _UNITS.get(text[-1:], 0) if text else 0
        digits = text[:-1] if shift else text
        if not _WHOLE.match(digits):
            return None
        count = int(digits) << shift
    else:
        return None
    return count if 0 <= count <= MAX_BYTE_COUNT else None


def _got(value: Any) -> str:
    """A bad value for a message: a str or an int as given, anything else with its type."""
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _shown(value)
    return f"{quote(value)} of type {type(value).__name__}"


def check_max_procs(max_procs: Any) -> Optional[int]:
    if max_procs is None:
        return None
    if not isinstance(max_procs, int) or isinstance(max_procs, bool) or not MIN_PROCS <= max_procs <= MAX_PROCS:
        raise invalid(f"max_procs must be None or a whole number of processes, at least {MIN_PROCS} and at most {MAX_PROCS} "
                      f"(got {quote(max_procs)})")
    return max_procs


def check_max_memory(max_memory: Any) -> Optional[int]:
    """None, a number of bytes, or a string such as "64M" (parse_bytes), at least MIN_MEMORY."""
    if max_memory is None:
        return None
    value = parse_bytes(max_memory)
    if value is None or value < MIN_MEMORY:
        raise invalid(f"max_memory must be None or at least {MIN_MEMORY} bytes: a number of bytes or a string "
                      f"with a K, M, G or T suffix (powers of 1024), e.g. \"64M\" (got {quote(max_memory)})")
    return value


def check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise invalid(f"{name} must be True or False (got {quote(value)} of type {type(value).__name__})")
    return value


def check_redact_patterns(patterns: Any) -> Tuple[str, ...]:
    """A list (or tuple) of non-empty strings; their syntax, Go's regular
    expressions, is checked by shellsup before anything runs."""
    if patterns is None:
        return ()
    if not isinstance(patterns, (list, tuple)):
        raise invalid("redact_patterns must be a list of regular expressions (strings) or None "
                      f"(got {quote(patterns)} of type {type(patterns).__name__})")
    for i, p in enumerate(patterns):
        if not isinstance(p, str) or p == "":
            got = '""' if p == "" else f"{quote(p)} of type {type(p).__name__}"
            raise invalid(f"redact_patterns[{i}] must be a non-empty string (got {got})")
        if "\0" in p:
            raise invalid(f"redact_patterns[{i}] must not contain a NUL byte (got {quote(p)})")
        try:
            p.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise invalid(f"redact_patterns[{i}] must be valid UTF-8 (got {quote(p)}: {exc.reason})") from None
    return tuple(patterns)


def check_spill_dir(spill: Any) -> Optional[str]:
    """None, or a directory shellsup can spill into, checked as shellsup checks
    it (Go's spill.CheckDir, in its words): existing, not a symbolic link,
    writable, and not writable by group or others. run() and start() both use it."""
    if spill is None:
        return None
    absolute = check_directory("spill", spill, must_exist=False)
    shown = quote(os.fsdecode(os.fspath(spill)))
    try:
        st = os.lstat(absolute)
    except FileNotFoundError:
        raise invalid(f"spill directory {shown} does not exist") from None
    except OSError as exc:
        raise invalid(f"spill directory {shown} cannot be used: {exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise invalid(f"spill directory {shown} is a symbolic link; name the directory itself")
    if not stat.S_ISDIR(st.st_mode):
        raise invalid(f"spill directory {shown} is not a directory")
    if st.st_mode & 0o022:
        raise invalid(f"spill directory {shown} is writable by group or others (mode {st.st_mode & 0o7777:04o}); "
                      "use a directory only its owner can write")
    if not os.access(absolute, os.W_OK | os.X_OK):
        raise invalid(f"spill directory {shown} is not writable")
    return absolute


def check_spill_max(spill_max: Any, spill: Optional[str], needs_spill: bool = True) -> Optional[int]:
    """None (shellsup's default, 256 MiB), or a byte count (parse_bytes) of at
    least 0, as shellsup's --spill-max. needs_spill: refuse it without a spill
    directory, as shellsup does (run(); start() always has one)."""
    if spill_max is None:
        return None
    value = parse_bytes(spill_max)
    if value is None or value < MIN_SPILL_MAX:
        raise invalid(f"spill_max must be None for shellsup's default ({DEFAULT_SPILL_MAX >> 20} MiB) or a byte count, "
                      f"at least {MIN_SPILL_MAX} and at most 2**62: {BYTE_COUNT_FORM} (got {_got(spill_max)})")
    if needs_spill and spill is None:
        raise invalid(f"spill_max (got {_got(spill_max)}) needs a spill directory: pass spill= too")
    return value


def check_capture(capture: Any) -> Optional[str]:
    if capture is not None and capture not in CAPTURE_MODES:
        raise invalid(f'capture must be "head", "tail" or "head+tail", or None for "head" (got {quote(capture)})')
    return capture


# The values of sandbox=, as shellsup's --sandbox takes them (docs/sandbox.md).
SANDBOX_MODES = ("read-only", "workspace-write", "none")


def check_sandbox(sandbox: Any, workspace: Optional[str], protect: Any, network: Any) -> Tuple[Optional[str], Tuple[str, ...], bool]:
    """sandbox=, protect= and network= as Go's request.ValidateSandbox checks
    them; shellsup resolves the protected directories."""
    if sandbox is not None and sandbox not in SANDBOX_MODES:
        raise invalid(f"sandbox must be one of {', '.join(SANDBOX_MODES)}, or None (got {quote(sandbox)})")
    if sandbox == "workspace-write" and workspace is None:
        raise invalid("sandbox workspace-write needs --workspace DIR, the directory the command may write (got no workspace=)")
    if protect is None:
        protect = ()
    if isinstance(protect, (str, bytes)) or not isinstance(protect, (list, tuple)):
        raise invalid(f"protect must be a list of directories or None (got {quote(protect)})")
    dirs = tuple(_protect_dir(d) for d in protect)
    if dirs and sandbox != "workspace-write":
        raise invalid(f"protect keeps directories of the workspace read-only and needs --sandbox workspace-write (got --sandbox {sandbox or 'none'})")
    return sandbox, dirs, not check_flag("network", network)


def _protect_dir(d: Any) -> str:
    """A protect directory: absolute, or relative to the workspace (passed
    as given; shellsup resolves it and checks it lies in the workspace)."""
    try:
        path = os.fsdecode(os.fspath(d))
    except TypeError:
        raise invalid(f"protect entries must be paths (got {quote(d)} of type {type(d).__name__})") from None
    if os.path.isabs(path):
        return check_directory("protect", path, must_exist=False)
    if path == "" or "\0" in path:
        raise invalid(f"protect must be a directory in the workspace, without NUL bytes (got {quote(path)})")
    return path


def shell_options(no_login: Any = False, scrub_env: Any = False, agent_env: Any = False, env_allow: Any = None,
                  workspace: Any = None,
                  redact: Any = False, redact_patterns: Any = None, spill: Any = None, spill_max: Any = None,
                  capture: Any = None, agent: Any = False, tidy: Any = False, sandbox: Any = None, protect: Any = None, network: Any = True) -> ShellOptions:
    """Check the pass-through options, in the order of run()'s signature."""
    no_login = check_flag("no_login", no_login)
    scrub_env = check_flag("scrub_env", scrub_env)
    agent_env = check_flag("agent_env", agent_env)
    allow = check_env_allow(env_allow)
    workspace = None if workspace is None else check_directory("workspace", workspace)
    redact = check_flag("redact", redact)
    patterns = check_redact_patterns(redact_patterns)
    spill = check_spill_dir(spill)
    mode, protected, no_network = check_sandbox(sandbox, workspace, protect, network)
    return ShellOptions(no_login=no_login, scrub_env=scrub_env, agent_env=agent_env, env_allow=allow,
                        workspace=workspace, redact=redact, redact_patterns=patterns, spill=spill,
                        spill_max=check_spill_max(spill_max, spill), capture=check_capture(capture),
                        agent=check_flag("agent", agent), tidy=check_flag("tidy", tidy),
                        sandbox=mode, protect=protected, no_network=no_network)


def request(command: Any, cwd: Any, timeout: Any, budget: Any, grace: Any, env: Any,
            max_procs: Any = None, max_memory: Any = None, pidns: Any = None, user: Any = None,
            kind: str = TIMEOUT, **options: Any) -> Request:
    """Check every argument, in the order of run()'s signature. timeout is
    the deadline in seconds, a job's lifetime with kind LIFETIME. options are
    shell_options()'s; with a workspace, cwd None means the workspace."""
    command = check_command(command)
    given_cwd = None if cwd is None else check_cwd(cwd)
    deadline = check_deadline(kind, timeout)
    budget = check_budget(budget)
    grace = check_grace(grace)
    env = check_env(env)
    max_procs = check_max_procs(max_procs)
    max_memory = check_max_memory(max_memory)
    pidns = check_pidns(pidns)
    user = check_user(user)
    opts = shell_options(**options)
    if given_cwd is None:
        given_cwd = opts.workspace if opts.workspace is not None else check_cwd(None)
    return Request(command=command, cwd=given_cwd, deadline=deadline, budget=budget, grace=grace, env=env,
                   max_procs=max_procs, max_memory=max_memory, pidns=pidns, user=user, options=opts)
