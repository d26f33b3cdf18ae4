"""Packaging: the platform wheel bundles the binary; a source install finds it on PATH.

Each install goes into a fresh virtual environment (with the interpreter's
site-packages visible, for msgpack) and runs a command through it, from a
directory outside this source tree, with SHELLSUP_BIN unset. pip is run
with --no-index: nothing is downloaded.
"""

import base64
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import shellsup

HERE = Path(__file__).resolve().parents[1]  # bindings/python
ROOT = HERE.parents[1]  # the repository
LICENSE = ROOT / "LICENSE"
WHEEL_NAME = f"shellsup-{shellsup.__version__}-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"

PROBE = """
import json, os, shellsup
result = shellsup.run("printf from-venv", progress=None)
print(json.dumps({"file": shellsup.__file__, "binary": shellsup.find_binary(), "stdout": result["stdout"],
                  "exitCode": result["exitCode"]}))
"""


LICENSE_PROBE = """
import importlib.metadata as m
d = m.distribution("shellsup")
print(d.metadata["License"])
print("\\n".join(p.name for p in d.files if p.name.startswith("LICENSE")))
"""


def _build_wheel(binary, out):
    done = subprocess.run([sys.executable, str(HERE / "build_wheel.py"), "--binary", binary, "--out", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, shellsup_bin):
    return _build_wheel(shellsup_bin, tmp_path_factory.mktemp("dist"))


def _clean_env(**extra):
    """os.environ without SHELLSUP_BIN, PYTHONPATH or pip configuration."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SHELLSUP_BIN", "PYTHONPATH") and not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def _venv(path):
    """A fresh virtual environment that sees the interpreter's site-packages (msgpack, pip, setuptools)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(path)],
                   check=True, timeout=120)
    python = path / "bin" / "python"
    if subprocess.run([str(python), "-c", "import pip"], capture_output=True).returncode != 0:
        subprocess.run([str(python), "-m", "ensurepip", "--default-pip"], check=True, timeout=300,
                       env=_clean_env(), capture_output=True)
    return python


def _pip_install(python, *args):
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--no-deps", *args],
                          env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def _probe(python, cwd, **env):
    import json

    done = subprocess.run([str(python), "-c", PROBE], cwd=cwd, env=_clean_env(**env),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_wheel_layout(wheel, shellsup_bin):
    assert wheel.name == WHEEL_NAME
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        dist_info = f"shellsup-{shellsup.__version__}.dist-info"
        assert {"shellsup/__init__.py", "shellsup/_bin/shellsup", "shellsup/py.typed", "shellsup/limits.json",
                f"{dist_info}/METADATA", f"{dist_info}/WHEEL", f"{dist_info}/RECORD",
                f"{dist_info}/LICENSE", f"{dist_info}/entry_points.txt"} <= set(names)
        assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
        binary = zf.getinfo("shellsup/_bin/shellsup")
        assert (binary.external_attr >> 16) & 0o777 == 0o755
        assert zf.read("shellsup/_bin/shellsup") == Path(shellsup_bin).read_bytes()
        # The limits are package data: the repository's table, copied (not a link).
        assert zf.read("shellsup/limits.json") == (HERE.parents[1] / "testdata" / "limits.json").read_bytes()
        wheel_meta = zf.read(f"{dist_info}/WHEEL").decode()
        assert "Root-Is-Purelib: false" in wheel_meta
        assert "Tag: py3-none-manylinux_2_17_x86_64" in wheel_meta
        assert "Tag: py3-none-manylinux2014_x86_64" in wheel_meta
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        assert "Requires-Dist: msgpack>=1.0" in metadata
        assert f"Version: {shellsup.__version__}" in metadata
        assert "License: Apache-2.0\n" in metadata and "License-File: LICENSE\n" in metadata
        assert zf.read(f"{dist_info}/LICENSE") == LICENSE.read_bytes()
        assert zf.read(f"{dist_info}/entry_points.txt").decode() == (
            "[console_scripts]\nshellsup = shellsup.__main__:main\n")
        rows = list(csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())))
        assert sorted(r[0] for r in rows) == sorted(names)
        for path, digest, size in rows:
            if path.endswith("RECORD"):
                assert digest == size == ""
                continue
            data = zf.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == ("sha256=" + expected, len(data)), path


def test_wheel_is_reproducible(wheel, shellsup_bin, tmp_path):
    assert _build_wheel(shellsup_bin, tmp_path).read_bytes() == wheel.read_bytes()


def test_wheel_refuses_a_dynamic_binary(tmp_path):
    done = subprocess.run([sys.executable, str(HERE / "build_wheel.py"), "--binary", sys.executable,
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "dynamically linked" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_wheel_installs_into_a_fresh_venv_and_uses_the_bundled_binary(wheel, tmp_path):
    python = _venv(tmp_path / "venv")
    _pip_install(python, str(wheel))
    installed = tmp_path / "venv" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    bundled = installed / "shellsup" / "_bin" / "shellsup"
    assert os.access(bundled, os.X_OK)
    got = _probe(python, cwd=tmp_path, PATH="/usr/bin:/bin")
    assert got["file"] == str(installed / "shellsup" / "__init__.py")
    assert got["binary"] == str(bundled)
    assert (got["stdout"], got["exitCode"]) == ("from-venv", 0)
    version = subprocess.run([str(python), "-m", "shellsup", "--version"], cwd=tmp_path, env=_clean_env(),
                             capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith(f"shellsup {shellsup.__version__} ")
    # The console command on the venv's PATH runs the bundled binary.
    home = tmp_path / "home"
    home.mkdir()
    hi = subprocess.run([str(tmp_path / "venv" / "bin" / "shellsup"), "--", "echo hi"], cwd=tmp_path,
                        env=_clean_env(PATH="/usr/bin:/bin", HOME=str(home)), capture_output=True, text=True,
                        timeout=60)
    assert (hi.returncode, hi.stdout) == (0, "hi\n"), hi.stderr
    assert hi.stderr.startswith("shellsup: exit 0 in ")
    # The licence is in the installed metadata.
    meta = subprocess.run([str(python), "-c", LICENSE_PROBE], cwd=tmp_path, env=_clean_env(),
                          capture_output=True, text=True, timeout=30)
    assert meta.stdout.splitlines() == ["Apache-2.0", "LICENSE"], meta.stderr


def test_source_install_finds_the_binary_on_path(shellsup_bin, tmp_path):
    # pip install ./bindings/python, from a copy so that the build leaves nothing in the tree.
    source = tmp_path / "src-copy"
    shutil.copytree(HERE, source, ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build", "dist", "_bin", ".pytest_cache", "tests"))
    python = _venv(tmp_path / "venv")
    # Offline, the build backend must already be installed (Debian: python3-setuptools, python3-wheel).
    missing = [m for m in ("setuptools", "wheel")
               if subprocess.run([str(python), "-c", f"import {m}"], capture_output=True).returncode != 0]
    if missing:
        pytest.fail(f"{sys.executable} lacks {', '.join(missing)}: pip install --no-build-isolation needs it")
    _pip_install(python, "--no-build-isolation", str(source))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "shellsup").symlink_to(shellsup_bin)
    venv_bin = tmp_path / "venv" / "bin"
    got = _probe(python, cwd=tmp_path, PATH=f"{venv_bin}:{bindir}:/usr/bin:/bin")
    assert got["file"].startswith(str(tmp_path / "venv"))
    assert got["binary"] == str(bindir / "shellsup")  # the console command in venv/bin is skipped
    assert (got["stdout"], got["exitCode"]) == ("from-venv", 0)
    # The console command finds the binary on PATH, past itself.
    version = subprocess.run([str(venv_bin / "shellsup"), "--version"], cwd=tmp_path,
                             env=_clean_env(PATH=f"{venv_bin}:{bindir}:/usr/bin:/bin"),
                             capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith(f"shellsup {shellsup.__version__} "), version.stderr
    meta = subprocess.run([str(python), "-c", LICENSE_PROBE], cwd=tmp_path, env=_clean_env(),
                          capture_output=True, text=True, timeout=30)
    assert meta.stdout.splitlines() == ["Apache-2.0", "LICENSE"], meta.stderr


def _readme_recipe():
    """The offline recipe's lines, from the README block after the offline-recipe marker."""
    text = (HERE / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- offline-recipe -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_readme_offline_recipe_works(shellsup_bin, tmp_path):
    # A stand-in for the repository root: bindings/python (the LICENSE link resolved) and bin/shellsup.
    root = tmp_path / "repo"
    shutil.copytree(HERE, root / "bindings" / "python", ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build", "dist", "_bin", ".pytest_cache", "tests"))
    (root / "bin").mkdir()
    (root / "bin" / "shellsup").symlink_to(shellsup_bin)
    home = tmp_path / "home"
    home.mkdir()
    lines = _readme_recipe()
    assert lines[0].startswith("python3 -m venv "), lines
    # "python3" is the Python with setuptools, wheel and msgpack: this one.
    script = "set -e\n" + "\n".join(lines).replace("python3 -m venv", f"{sys.executable} -m venv", 1)
    done = subprocess.run(["bash", "-c", script], cwd=root, env=_clean_env(HOME=str(home), PATH="/usr/bin:/bin"),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith("hi\n"), done.stdout
    assert "shellsup: exit 0 in " in done.stderr
    assert not (root / "bindings" / "python" / "src" / "shellsup" / "_bin").exists()


def test_the_version_has_one_source(shellsup_bin):
    version = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
    assert shellsup.__version__ == version
    out = subprocess.run([shellsup_bin, "--version"], capture_output=True, text=True, timeout=30)
    assert out.stdout.startswith(f"shellsup {version} ("), out


def test_wheel_refuses_a_version_mismatch(shellsup_bin, tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(HERE, root / "bindings" / "python", ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build", "dist", "_bin", ".pytest_cache", "tests"))
    (root / "VERSION").write_text("9.9.9\n")
    done = subprocess.run([sys.executable, str(root / "bindings" / "python" / "build_wheel.py"), "--binary",
                           shellsup_bin, "--out", str(tmp_path / "dist")], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"_version.py says '{shellsup.__version__}' but VERSION says '9.9.9'" in done.stderr


def _package_copy(tmp_path):
    """A copy of the source package without any bundled binary; returns its sys.path entry."""
    src = tmp_path / "src"
    shutil.copytree(HERE / "src" / "shellsup", src / "shellsup",
                    ignore=shutil.ignore_patterns("__pycache__", "_bin"))
    return src


def test_python_m_shellsup_without_a_binary_lists_the_places(tmp_path):
    # The package without a bundled binary, no SHELLSUP_BIN, an empty PATH.
    src = _package_copy(tmp_path)
    env = _clean_env(PYTHONPATH=str(src), PATH=str(tmp_path / "empty"))
    done = subprocess.run([sys.executable, "-m", "shellsup", "--version"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 127
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == "shellsup: no shellsup binary found; looked at:"
    assert lines[1:4] == ["  $SHELLSUP_BIN (not set)",
                          f"  {src / 'shellsup' / '_bin' / 'shellsup'} (bundled in the package)",
                          f"  shellsup on $PATH ({str(tmp_path / 'empty')!r})"]
    assert "Traceback" not in done.stderr


def test_python_m_shellsup_with_a_wrong_shellsup_bin(tmp_path):
    env = _clean_env(PYTHONPATH=str(_package_copy(tmp_path)), SHELLSUP_BIN=str(tmp_path / "nope"))
    done = subprocess.run([sys.executable, "-m", "shellsup"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 127
    assert done.stderr.splitlines()[1] == f"  $SHELLSUP_BIN={str(tmp_path / 'nope')!r} (does not exist)"
