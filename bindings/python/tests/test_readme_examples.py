"""The top-level README's Python examples, run as written.

Each block after a ``<!-- python-...-example -->`` marker is run by a child Python importing
this source tree; every ``print(...)`` line of the block carries, after ``#``, the line it
prints, and the output must be exactly those lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def _block(marker: str) -> str:
    text = README.read_text(encoding="utf-8")
    assert f"<!-- {marker} -->" in text, f"the README has no {marker} block"
    return text.split(f"<!-- {marker} -->\n```python\n", 1)[1].split("\n```\n", 1)[0] + "\n"


def _expected(code: str) -> list:
    return [line.split("#", 1)[1].strip() for line in code.splitlines()
            if line.startswith("print(") and "#" in line]


@pytest.mark.parametrize("marker", ["python-run-example", "python-job-example"])
def test_the_readme_example_prints_what_it_says(marker, child_env, tmp_path):
    code = _block(marker)
    expected = _expected(code)
    assert expected, f"the {marker} block prints nothing it could be checked against"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=child_env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expected, out.stdout + out.stderr
