"""Spill files are read only if they are what shellsup made.

A run directory 0700 and files 0600, of this process's user, no symbolic
link at either step. Before, the binding reopened the path with O_NOFOLLOW
only and read whatever was there.
"""

import os
from pathlib import Path

import pytest

from shellsup._spillread import SpillReader, open_spill, tail_lines


def _run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir(mode=0o700)
    for name in ("stdout", "stderr"):
        (d / name).write_text(name)
        (d / name).chmod(0o600)
    return d


def test_as_shellsup_makes_it(tmp_path):
    d = _run_dir(tmp_path)
    os.close(open_spill(str(d / "stdout")))
    r = SpillReader(str(d / "stdout"))
    assert r.take(100, True) == "stdout"
    r.close()
    assert tail_lines(str(d / "stderr"), 1) == "stderr"


def _file_open_to_others(d):
    (d / "stderr").chmod(0o644)


def _dir_open_to_others(d):
    d.chmod(0o755)


def _file_is_a_link(d):
    (d / "stderr").unlink()
    (d / "stderr").symlink_to("/etc/passwd")


def _dir_is_a_link(d):
    real = d.with_name("real")
    d.rename(real)
    d.symlink_to(real)


def _file_is_a_dir(d):
    (d / "stderr").unlink()
    (d / "stderr").mkdir(mode=0o700)


def _file_of_another_user(d):
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file away")
    os.chown(d / "stderr", 65534, 65534)


@pytest.mark.parametrize("spoil,want", [
    (_file_open_to_others, "open to group or others"),
    (_dir_open_to_others, "open to group or others"),
    (_file_is_a_link, "symbolic link"),
    (_dir_is_a_link, "Not a directory"),
    (_file_is_a_dir, "not what shellsup made"),
    (_file_of_another_user, "owned by uid 65534"),
])
def test_refused(tmp_path, spoil, want):
    d = _run_dir(tmp_path)
    spoil(d)
    with pytest.raises(OSError) as exc:
        SpillReader(str(d / "stderr")).take(100, True)
    assert want in str(exc.value)
    with pytest.raises(OSError):
        tail_lines(str(d / "stderr"), 1)


def test_missing_is_empty(tmp_path):
    assert SpillReader(str(tmp_path / "none" / "stdout")).take(10, True) == ""
    assert tail_lines(str(tmp_path / "none" / "stdout"), 1) == ""
