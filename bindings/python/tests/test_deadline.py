"""One deadline with a kind: a run's argv carries exactly one --timeout, a
job's exactly one --lifetime, and the watchdog measures either alike."""

import pytest

from shellsup import ShellsupError, _core, _jobargs, _limits, _validate


def _deadline_flags(argv):
    before = argv[:argv.index("--")]
    return [(a, before[i + 1]) for i, a in enumerate(before) if a in ("--timeout", "--lifetime")]


def test_a_run_has_one_timeout():
    req = _validate.request("true", None, 7, None, None, None)
    assert req.deadline == _validate.Deadline(_validate.TIMEOUT, 7)
    assert _deadline_flags(req.argv("shellsup")) == [("--timeout", "7")]


def test_a_job_has_one_lifetime_and_no_timeout():
    base = _validate.request("true", None, 90.5, None, None, None, kind=_validate.LIFETIME)
    req = _jobargs.JobRequest(**{f: getattr(base, f) for f in base.__dataclass_fields__}, spill_dir="/tmp")
    argv = req.argv("shellsup")
    assert _deadline_flags(argv) == [("--lifetime", "90.5")]
    assert argv[-2:] == ["--", "true"] and "--spill" in argv
    core = _core.Core(req, "/bin/shellsup")
    core.spawned(0.0)
    assert core.deadline == 90.5 + _limits.DEFAULT_GRACE + _limits.WATCHDOG_MARGIN


def test_each_kind_has_its_own_rule():
    assert _validate.request("true", None, None, None, None, None, kind=_validate.LIFETIME).deadline.seconds == \
        _limits.DEFAULT_LIFETIME
    with pytest.raises(ShellsupError, match=r"timeout must be greater than 0 and at most 600 seconds \(got 601\)"):
        _validate.request("true", None, 601, None, None, None)
    lifetime = _validate.request("true", None, 601, None, None, None, kind=_validate.LIFETIME)
    assert lifetime.deadline == _validate.Deadline(_validate.LIFETIME, 601)
    with pytest.raises(ShellsupError, match=r"lifetime must be greater than 0 and at most 604800 seconds"):
        _validate.request("true", None, 604801, None, None, None, kind=_validate.LIFETIME)
