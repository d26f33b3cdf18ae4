"""pidns=True: the command runs under an init of its own PID namespace (shellsup --pidns)."""

import pytest

import shellsup as shell


def test_pidns_runs_under_its_own_init():
    result = shell.run("sleep 300 & cat /proc/1/comm; echo ppid $PPID; exit 9", pidns=True, progress=None)
    assert result["stdout"] == "shellsup-init\nppid 1\n"
    assert (result["exitCode"], result["signal"]) == (9, None)
    # pidns on top of whatever else is in force here (cgroup as root)
    tiers = result.cleanup["tier"].split("+")
    assert tiers[0] == "pidns" and tiers[-1] == "subreaper", result.cleanup["tier"]
    assert result.cleanup["stragglers"] == []


def test_pidns_signal_status_as_without_it():
    plain = shell.run("kill -TERM $$", progress=None)
    ns = shell.run("kill -TERM $$", pidns=True, progress=None)
    assert (ns["exitCode"], ns["signal"]) == (plain["exitCode"], plain["signal"]) == (143, "SIGTERM")


@pytest.mark.parametrize("bad", [1, "yes", 0.0])
def test_pidns_must_be_a_bool_or_none(bad):
    with pytest.raises(shell.ShellsupError) as e:
        shell.run("true", pidns=bad, progress=None)
    assert e.value.category == "validation"
    assert "pidns must be None, True or False" in str(e.value)
