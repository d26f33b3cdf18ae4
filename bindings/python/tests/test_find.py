"""Binary lookup: SHELLSUP_BIN, then the bundled binary, then PATH; the error lists every place.

The installed layouts (bundled in the wheel, PATH after a source install)
are exercised for real in test_packaging.py.
"""

import os

import pytest

import shellsup
from shellsup import _find


@pytest.fixture
def places(tmp_path, monkeypatch, shellsup_bin):
    """Three candidate binaries (symlinks to the real one) and a lookup that sees none by default."""
    made = {}
    for name in ("env", "bundled", "path"):
        d = tmp_path / name
        d.mkdir()
        (d / "shellsup").symlink_to(shellsup_bin)
        made[name] = str(d / "shellsup")
    monkeypatch.delenv("SHELLSUP_BIN")
    monkeypatch.setattr(_find, "BUNDLED", str(tmp_path / "no-bundle" / "shellsup"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    return made


def test_shellsup_bin_comes_first(places, monkeypatch):
    monkeypatch.setenv("SHELLSUP_BIN", places["env"])
    monkeypatch.setattr(_find, "BUNDLED", places["bundled"])
    monkeypatch.setenv("PATH", os.path.dirname(places["path"]))
    assert shellsup.find_binary() == places["env"]


def test_bundled_comes_before_path(places, monkeypatch):
    monkeypatch.setattr(_find, "BUNDLED", places["bundled"])
    monkeypatch.setenv("PATH", os.path.dirname(places["path"]))
    assert shellsup.find_binary() == places["bundled"]


def test_path_is_the_last_resort(places, monkeypatch):
    monkeypatch.setenv("PATH", os.path.dirname(places["path"]))
    assert shellsup.find_binary() == places["path"]
    assert shellsup.run("printf found", progress=None)["stdout"] == "found"


def test_not_found_lists_every_place(places, tmp_path):
    with pytest.raises(shellsup.ShellsupError) as exc:
        shellsup.find_binary()
    message = str(exc.value)
    assert exc.value.category == "not_found"
    assert "$SHELLSUP_BIN (not set)" in message
    assert str(tmp_path / "no-bundle" / "shellsup") in message
    assert str(tmp_path / "empty-path") in message


def test_run_raises_not_found_before_spawning(places):
    with pytest.raises(shellsup.ShellsupError) as exc:
        shellsup.run("echo x", progress=None)
    assert exc.value.category == "not_found"


@pytest.mark.parametrize("kind", ["missing", "not-executable", "directory"])
def test_a_wrong_shellsup_bin_is_an_error_not_a_fallback(places, monkeypatch, tmp_path, kind):
    target = {"missing": tmp_path / "nope", "not-executable": tmp_path / "plain", "directory": tmp_path}[kind]
    if kind == "not-executable":
        target.write_text("")
    monkeypatch.setenv("SHELLSUP_BIN", str(target))
    monkeypatch.setattr(_find, "BUNDLED", places["bundled"])  # would work, but must not be used
    with pytest.raises(shellsup.ShellsupError) as exc:
        shellsup.find_binary()
    assert exc.value.category == "not_found" and str(target) in str(exc.value)


def test_bundled_path_is_inside_the_package():
    assert _find.BUNDLED == os.path.join(os.path.dirname(shellsup.__file__), "_bin", "shellsup")


def _console_script(directory, python="/usr/bin/python3"):
    """A copy of the console command pip writes for this package."""
    directory.mkdir(exist_ok=True)
    script = directory / "shellsup"
    script.write_text(f"#!{python}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\n"
                      "from shellsup.__main__ import main\nif __name__ == '__main__':\n    sys.exit(main())\n")
    script.chmod(0o755)
    return script


def test_path_skips_the_console_command(places, monkeypatch, tmp_path):
    script = _console_script(tmp_path / "venv-bin")
    monkeypatch.setenv("PATH", os.pathsep.join([str(script.parent), os.path.dirname(places["path"])]))
    assert shellsup.find_binary() == places["path"]


def test_only_the_console_command_on_path_is_not_found(places, monkeypatch, tmp_path):
    script = _console_script(tmp_path / "venv-bin")
    monkeypatch.setenv("PATH", str(script.parent))
    with pytest.raises(shellsup.ShellsupError) as exc:
        shellsup.find_binary()
    assert f"{script} (skipped: the Python console command, not the binary)" in exc.value.places


def test_another_script_on_path_is_used(places, monkeypatch, tmp_path):
    # A wrapper script of the user's own is a binary as far as lookup goes.
    d = tmp_path / "wrapper"
    d.mkdir()
    wrapper = d / "shellsup"
    wrapper.write_text(f"#!/bin/sh\nexec {places['path']} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", str(d))
    assert shellsup.find_binary() == str(wrapper)


def test_places_lists_one_entry_per_place(places, tmp_path):
    with pytest.raises(shellsup.ShellsupError) as exc:
        shellsup.find_binary()
    assert exc.value.places == ["$SHELLSUP_BIN (not set)",
                                f"{tmp_path / 'no-bundle' / 'shellsup'} (bundled in the package)",
                                f"shellsup on $PATH ({str(tmp_path / 'empty-path')!r})"]


@pytest.mark.parametrize("element", ["", ".", "bin"])
def test_path_skips_empty_and_relative_elements(places, monkeypatch, tmp_path, element):
    # A shellsup dropped in the current directory (or below it) is never run:
    # an empty or relative PATH element names the cwd, not a chosen place.
    cwd = tmp_path / "cwd"
    (cwd / "bin").mkdir(parents=True)
    for d in (cwd, cwd / "bin"):
        planted = d / "shellsup"
        planted.write_text("#!/bin/sh\necho planted\n")
        planted.chmod(0o755)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PATH", os.pathsep.join([element, os.path.dirname(places["path"])]))
    assert shellsup.find_binary() == places["path"]
    monkeypatch.setenv("PATH", element)
    with pytest.raises(shellsup.ShellsupError) as exc:
        shellsup.find_binary()
    assert f"{element!r} on $PATH (skipped: not an absolute directory)" in exc.value.places
