"""tidy=True: the binary tidies the captured text (one tidier, in shellsup;
none in Python). These tests run the corpus of testdata/tidy/ through the
binding and compare with the same .want files the Go tests read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import shellsup as shell

CORPUS = Path(__file__).resolve().parents[3] / "testdata" / "tidy"
CASES = sorted(p.stem for p in CORPUS.glob("*.in"))


@pytest.fixture
def hold_long(monkeypatch):
    """The test build, holding a partial line a minute instead of 50 ms: a
    whole text compared does not depend on a scheduler's pause."""
    seams = os.environ.get("SHELLSUP_TESTSEAMS_BIN")
    if not seams:
        pytest.skip("needs SHELLSUP_TESTSEAMS_BIN (make test-python builds it)")
    monkeypatch.setenv("SHELLSUP_BIN", seams)
    monkeypatch.setenv("SHELLSUP_TEST_TIDY_HOLD", "1m")


def test_corpus_is_there():
    assert {"ls-color", "ls-hyperlink", "git-log", "pytest-color", "go-test", "npm-install", "apt-download",
            "tqdm-like", "pip-download"} <= set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_corpus_tidied_like_the_go_tests(name, hold_long):
    path = CORPUS / f"{name}.in"
    want = (CORPUS / f"{name}.want").read_text(encoding="utf-8")
    seen = []
    r = shell.run(f"cat '{path}'", tidy=True, progress=lambda stream, text: seen.append((stream, text)))
    assert r["stdout"] == want
    assert "".join(text for stream, text in seen if stream == "stdout") == want, "progress is tidied too"
    out = r.streams["stdout"]
    assert out["lossyBytes"] == 0 and out["binary"] is False
    # totalBytes is still the raw count; what the tidier took out adds up.
    assert r["totalBytes"] == path.stat().st_size
    assert r["totalBytes"] - out["tidiedBytes"] == len(r["stdout"].encode()) == r["capturedBytes"]


def test_binary_is_one_line_and_reported():
    path = CORPUS / "true.bin"
    raw = path.read_bytes()
    r = shell.run(f"cat '{path}'", tidy=True, progress=None)
    head = " ".join(f"{b:02x}" for b in raw[:8])
    assert r["stdout"] == f"[binary output: {len(raw)} bytes; starts {head} …]\n"
    assert r.streams["stdout"]["binary"] is True
    assert r.streams["stdout"]["lossyBytes"] > 0
    plain = shell.run(f"cat '{path}'", progress=None)
    assert plain.streams["stdout"]["binary"] is True, "reported without tidy too"
    assert "\ufffd" in plain["stdout"]
    assert plain.streams["stdout"]["tidiedBytes"] == 0


def test_redraws_cost_one_line():
    cmd = r"for i in $(seq 1 200); do printf '\r%3d%% |\033[32m%s\033[0m|' $i x; done; echo"
    r = shell.run(cmd, tidy=True, progress=None)
    assert r["stdout"] == "200% |x|\n"
    assert r["capturedBytes"] == len("200% |x|\n")


def test_tidy_must_be_a_bool(no_spawn):
    with pytest.raises(shell.ShellsupError) as exc:
        shell.run("true", tidy="yes")
    assert exc.value.category == "validation"
    assert "tidy" in str(exc.value)


def test_job_takes_tidy():
    # wait_for reads the spill files, which keep the raw bytes: the pattern
    # sees "\033[1mready\033[0m"; the result's text is tidied.
    job = shell.start("printf '\\033[1mready\\033[0m\\n'; sleep 30", tidy=True)
    try:
        assert job.wait_for(pattern="ready", timeout=10)
    finally:
        r = job.kill()
        job.close()
    assert r["stdout"] == "ready\n"
