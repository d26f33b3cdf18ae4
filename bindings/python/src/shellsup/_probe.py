"""The conditions of Job.wait_for(): output matching a pattern, a port of the job's, a URL.

Each step checks every pending condition once, each check bounded in time
(a ports query, a connect, an HTTP request), so the sync driver can sleep
between steps on the job's end and the asyncio driver can run a step in an
executor without leaving long work behind when it is cancelled.
"""

from __future__ import annotations

import math
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Protocol

from . import _frames
from ._errors import JobError, JobTimeoutError
from ._jobargs import check_pattern, check_port, check_url, check_wait_timeout
from ._spillread import SpillReader
from ._validate import invalid, quote

SCAN_CARRY = 64 * 1024  # characters a pattern may span across two scans
SCAN_STEP = 1 << 20  # bytes of each stream one scan reads
PORTS_WAIT = 5.0  # seconds a ports query waits for its answer
PROBE_TIMEOUT = 2.0  # seconds one connect or HTTP request may take
STREAMS = ("stdout", "stderr")


class Target(Protocol):
    """What a probe needs of the job it waits on (a _job.Job; this module
    does not import _job, which imports it)."""

    name: str
    spill: str
    _finished: threading.Event

    def _end(self, stream: str, ended: bool) -> int: ...

    def _ask_ports(self, query: bytes, timeout: float) -> List[Dict[str, Any]]: ...

    def _ended_error(self, waiting_for: str) -> JobError: ...


class Probe:
    """The conditions of one wait_for(), checked one bounded step at a time."""

    def __init__(self, job: Target, pattern: Any, port: Any, url: Any, timeout: Any) -> None:
        self.job = job
        self.pattern = check_pattern(pattern)
        self.port = check_port(port)
        self.url = check_url(url)
        self.timeout = check_wait_timeout(timeout)
        if self.pattern is None and self.port is None and self.url is None:
            raise invalid("wait_for needs a pattern, a port or a url to wait for (got none)")
        self.start = time.monotonic()
        self.deadline = math.inf if self.timeout is None else self.start + self.timeout
        self.match: Optional["re.Match[str]"] = None
        self.ok = {"pattern": self.pattern is None, "port": self.port is None, "url": self.url is None}
        self.why = {"port": "", "url": ""}  # the last reason a check failed, for the timeout message
        self._scan = {s: SpillReader(os.path.join(job.spill, s)) for s in STREAMS}
        self._carry = {s: "" for s in STREAMS}
        self._tries = 0

    def step(self) -> bool:
        """Check each pending condition once; True when all hold. Raises when the job ended or time ran out."""
        ended = self.job._finished.is_set()
        if not self.ok["pattern"]:
            self._scan_output(ended)
        if not ended:
            if not self.ok["port"]:
                self._check_port()
            if not self.ok["url"]:
                self._check_url()
        if all(self.ok.values()):
            return True
        if ended:
            raise self.job._ended_error(self._what())
        if time.monotonic() >= self.deadline:
            if not self.ok["port"] and self.why["port"].startswith("no process"):
                self.why["port"] += self._stranger()  # once, at the end: a stranger's port is not probed in a loop
            why = "; ".join(f"{k}: {v}" for k, v in self.why.items() if v and not self.ok[k])
            raise JobTimeoutError(f"job {self.job.name!r} is still running, but {self._what()} did not happen within "
                                  f"{self.timeout:g} s{'; ' + why if why else ''}; it was left running")
        return False

    def pause(self) -> float:
        self._tries += 1
        return max(0.0, min(0.01 * self._tries, 0.2, self.deadline - time.monotonic()))

    def _bound(self, most: float) -> float:
        """A check's own time limit: most, cut to what is left of the wait (at least 50 ms)."""
        return max(0.05, min(most, self.deadline - time.monotonic()))

    def _what(self) -> str:
        parts = []
        if self.pattern is not None:
            parts.append(f"output matching {quote(self.pattern.pattern)}")
        if self.port is not None:
            parts.append(f"port {self.port} accepting connections")
        if self.url is not None:
            parts.append(f"{self.url} answering 2xx/3xx")
        return " and ".join(parts)

    def _scan_output(self, ended: bool) -> None:
        """Search the output read since the last step (the whole output once the job ended)."""
        assert self.pattern is not None
        while True:
            progressed = False
            for s in STREAMS:
                r = self._scan[s]
                end = self.job._end(s, ended)
                n = min(SCAN_STEP, end - r.offset)
                last = ended and n == end - r.offset and not r.flushed
                if n <= 0 and not last:
                    continue
                text = self._carry[s] + r.take(n, last)
                found = self.pattern.search(text)
                if found is not None:
                    self.match = found
                    self.ok["pattern"] = True
                    return
                self._carry[s] = text[-SCAN_CARRY:]
                progressed = progressed or n > 0
            if not (ended and progressed):
                return

    def _check_port(self) -> None:
        assert self.port is not None
        try:
            mine = [p for p in self.job._ask_ports(_frames.ports_query(self.port), self._bound(PORTS_WAIT))
                    if p.get("port") == self.port and p.get("proto") in ("tcp", "tcp6")]
        except JobTimeoutError as exc:
            self.why["port"] = str(exc)
            return
        if not mine:
            self.why["port"] = "no process of the job listens on it"
            return
        for entry in mine:
            host = str(entry.get("addr") or "127.0.0.1")
            host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
            try:
                with socket.create_connection((host, self.port), timeout=self._bound(PROBE_TIMEOUT)):
                    self.ok["port"] = True
                    return
            except OSError as exc:
                self.why["port"] = f"the job listens on {host} but a connection failed: {exc}"

    def _stranger(self) -> str:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return " (something else on this machine accepts connections there)"
        except OSError:
            return ""

    def _check_url(self) -> None:
        assert self.url is not None
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            with opener.open(self.url, timeout=self._bound(PROBE_TIMEOUT)) as resp:
                status = resp.status
        except urllib.error.HTTPError as exc:
            status = exc.code
            exc.close()
        except (OSError, ValueError) as exc:
            self.why["url"] = f"no answer: {exc}"
            return
        if 200 <= status < 400:
            self.ok["url"] = True
        else:
            self.why["url"] = f"it answered {status}"

    def close(self) -> None:
        for r in self._scan.values():
            r.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A 3xx is an answer: do not follow it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None
