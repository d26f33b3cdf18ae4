"""Fixtures for the shellsup binding tests: the real binary, a clean HOME, and a leak check.

Every test runs with SHELLSUP_LEAK_TOKEN=<unique hex> in the environment that
runs inherit. After the test, /proc is scanned for any process whose
environment holds the token: a survivor fails the test and is SIGKILLed
(through a pidfd, after re-checking it is still the same process).
test_leakcheck.py proves the scan finds a deliberate leak.
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
TOKEN_VAR = "SHELLSUP_LEAK_TOKEN"


def pytest_configure(config: pytest.Config) -> None:
    binary = os.environ.get("SHELLSUP_BIN")
    if not binary:
        raise pytest.UsageError(
            "SHELLSUP_BIN is not set: these tests run the real binary. Build it and point at it:\n"
            "  CGO_ENABLED=0 go build -o bin/shellsup ./cmd/shellsup && "
            "SHELLSUP_BIN=$PWD/bin/shellsup python3 -m pytest bindings/python/tests"
        )
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise pytest.UsageError(f"SHELLSUP_BIN={binary!r} is not an executable file")
    # A suite started in the background of a non-interactive shell inherits SIGINT ignored, and
    # Python then raises no KeyboardInterrupt: the tests that interrupt a run need it back.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def shellsup_bin() -> str:
    """The absolute path of the binary under test (from SHELLSUP_BIN)."""
    return os.path.abspath(os.environ["SHELLSUP_BIN"])


@pytest.fixture(scope="session", autouse=True)
def clean_home(tmp_path_factory: pytest.TempPathFactory):
    """An empty HOME for the session: bash -l would otherwise source a slow ~/.profile."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        yield home


# -- the leak check -------------------------------------------------------------


@dataclass
class Proc:
    pid: int
    comm: str
    cmdline: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.comm}): {self.cmdline}"


class LeakScanner:
    """Finds and kills processes whose environment carries one token."""

    def __init__(self, token: str) -> None:
        self.token = token
        self._needle = f"{TOKEN_VAR}={token}".encode()

    def env(self, **extra: str) -> Dict[str, str]:
        """A copy of os.environ (token included) plus extra, for env= and helper processes."""
        env = dict(os.environ)
        env.update(extra)
        return env

    def _holds_token(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                return self._needle in f.read().split(b"\0")
        except OSError:  # gone, a zombie, or not ours to read
            return False

    def survivors(self) -> List[Proc]:
        """Every live process, other than this one, whose environment holds the token."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            pid = int(entry)
            if self._holds_token(pid):
                found.append(Proc(pid, _read(f"/proc/{pid}/comm"), _read(f"/proc/{pid}/cmdline").replace("\0", " ")))
        return found

    def wait_for(self, count: int, comm: Optional[str] = None, deadline: float = 5.0) -> List[Proc]:
        """Poll until at least count survivors (named comm, if given) exist; fail at the deadline."""
        end = time.monotonic() + deadline
        while True:
            procs = [p for p in self.survivors() if comm is None or p.comm == comm]
            if len(procs) >= count:
                return procs
            if time.monotonic() > end:
                pytest.fail(f"expected {count} processes {comm or ''} with the token within {deadline}s, saw {procs}")
            time.sleep(0.01)

    def kill(self, procs: List[Proc], deadline: float = 5.0) -> None:
        """SIGKILL each process through a pidfd, after re-checking it still holds the token; wait until gone."""
        for proc in procs:
            try:
                pidfd = os.pidfd_open(proc.pid)
            except ProcessLookupError:
                continue
            try:
                # The pidfd pins the process: if it still holds the token now, it is the one we saw.
                if self._holds_token(proc.pid):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    select.select([pidfd], [], [], deadline)  # readable once it has exited
            except ProcessLookupError:
                pass
            finally:
                os.close(pidfd)


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return "?"


@pytest.fixture(autouse=True)
def leaks(monkeypatch: pytest.MonkeyPatch):
    """Tag everything the test starts with a token; fail the test if anything tagged survives it."""
    scanner = LeakScanner(secrets.token_hex(8))
    monkeypatch.setenv(TOKEN_VAR, scanner.token)
    yield scanner
    leaked = scanner.survivors()
    if leaked:
        scanner.kill(leaked)
        pytest.fail("processes survived the test (killed now):\n  " + "\n  ".join(map(str, leaked)))


# -- helpers for tests ------------------------------------------------------------


@pytest.fixture
def child_env(leaks: LeakScanner, shellsup_bin: str) -> Dict[str, str]:
    """The environment for a child Python that imports shellsup from this source tree."""
    path = os.environ.get("PYTHONPATH")
    return leaks.env(PYTHONPATH=str(SRC) + (os.pathsep + path if path else ""), SHELLSUP_BIN=shellsup_bin)


@pytest.fixture
def no_spawn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Make any spawn fail the test: a spy SHELLSUP_BIN and patched spawn functions."""
    import asyncio
    import subprocess

    spy_mark = tmp_path / "spawned"
    spy = tmp_path / "spy-shellsup"
    spy.write_text(f"#!/bin/sh\ntouch '{spy_mark}'\n")
    spy.chmod(0o755)
    monkeypatch.setenv("SHELLSUP_BIN", str(spy))

    def refuse(*args, **kwargs):
        raise AssertionError(f"spawned {args!r} on a request that should have been refused")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(asyncio, "create_subprocess_exec", refuse)
    yield
    assert not spy_mark.exists(), "the binary was executed"


PY = sys.executable
