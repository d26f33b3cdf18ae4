"""max_procs= and max_memory=: passed to shellsup as --max-procs/--max-memory, checked before any spawn."""

import os
import subprocess

import pytest

import shellsup as shell

PIDS_MAX = """v2=/sys/fs/cgroup/unified$(sed -n 's/^0:://p' /proc/self/cgroup)/pids.max
v1=/sys/fs/cgroup/pids$(sed -n 's/^[0-9]*:pids://p' /proc/self/cgroup)/pids.max
if [ -r "$v2" ]; then cat "$v2"; else cat "$v1"; fi"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a cgroup leaf")
def test_max_procs_reaches_the_leaf():
    result = shell.run(PIDS_MAX, progress=None, max_procs=32, max_memory="64M")
    assert result["stdout"] == "32\n"
    assert result.cleanup["stragglers"] == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a cgroup leaf")
def test_raised_limit_reported_tampered():
    raise_it = PIDS_MAX.replace('cat "$v2"; else cat "$v1"', 'f=$v2; else f=$v1') + '\necho max > "$f"; cat "$f"'
    result = shell.run(raise_it, progress=None, max_procs=20)
    assert result["stdout"] == "max\n"  # the command (same uid) raised its own limit...
    assert result.cleanup["tampered"] == ["pids.max"]  # ...and the report says so
    untouched = shell.run(PIDS_MAX, progress=None, max_procs=20)
    assert "tampered" not in untouched.cleanup


@pytest.mark.parametrize("kwargs,message", [
    ({"max_procs": 1}, "max_procs must be None or a whole number of processes, at least 2"),
    ({"max_procs": True}, "max_procs must be None"),
    ({"max_memory": "64Q"}, "max_memory must be None or at least 4194304 bytes"),
    ({"max_memory": 1024}, "(got 1024)"),
])
def test_limits_refused_before_spawn(no_spawn, kwargs, message):
    with pytest.raises(shell.ShellsupError) as exc:
        shell.run("echo never", progress=None, **kwargs)
    assert exc.value.category == "validation" and message in str(exc.value)


def test_memory_suffixes():
    from shellsup._validate import check_max_memory
    assert check_max_memory("64M") == 64 << 20
    assert check_max_memory("1g") == 1 << 30
    assert check_max_memory("8192KiB") == 8 << 20
    assert check_max_memory(5 << 20) == 5 << 20


# Byte counts on both sides of every edge of shellsup's parser ("" is left
# out: for the binary an empty --spill-max is the option not given).
BYTE_TEXTS = ["0", "-0", "+5K", "512", " 1g ", "64M", "64m", "64MB", "64MiB", "64mib", "1T", "1kb", "64BIB", "4194304T",
              "4611686018427387904", " ", "B", "KB", "-1", "1.5G", "12X", "64 M", "1P", "4194305T", "4611686018427387905",
              "99999999999999999999", "0x10", "1_000"]


def test_parse_bytes_reads_what_the_binary_reads(tmp_path):
    """parse_bytes accepts exactly the byte counts shellsup's --spill-max accepts
    (Go's request.ParseBytes, at least 0), asked of the real binary."""
    from shellsup._validate import parse_bytes
    spill = tmp_path / "spill"
    spill.mkdir(mode=0o700)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    for text in BYTE_TEXTS:
        proc = subprocess.run([os.environ["SHELLSUP_BIN"], "--no-login", "--quiet", "--spill", str(spill),
                               "--spill-max", text, "--", "true"], env=env, capture_output=True, timeout=60)
        assert proc.returncode in (0, 125), (text, proc.stderr)
        if proc.returncode == 125:
            assert b"--spill-max must be" in proc.stderr, (text, proc.stderr)
        assert (parse_bytes(text) is not None) == (proc.returncode == 0), (text, proc.stderr)


def test_max_memory_uses_the_one_byte_parser():
    """max_memory and spill_max read byte counts alike; max_memory keeps its minimum.
    Where the two Python parsers disagreed the binary's rule won: at most 2**62."""
    from shellsup._validate import check_max_memory
    assert check_max_memory("1T") == 1 << 40
    assert check_max_memory(1 << 62) == 1 << 62
    for bad in ((1 << 62) + 1, "4194305T", 0, "0", "-1", True):
        with pytest.raises(shell.ShellsupError, match="max_memory must be None or at least 4194304 bytes"):
            check_max_memory(bad)
