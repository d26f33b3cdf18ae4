"""max_procs= and max_memory=: passed to shellsup as --max-procs/--max-memory, checked before any spawn."""

import os

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
