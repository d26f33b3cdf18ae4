#!/usr/bin/env bash
# Records the tidy corpus: real captures of real tools on this machine, each
# NAME.in the raw bytes a pipe (or, where a tool draws progress only on a
# terminal, a pty through script(1)) gave. Where the same tool can print
# the same text without colour, NAME.want is that plain run: an oracle the
# tidier did not write. The other NAME.want files were written by the
# tidier (go test ./tidy/ -run 'TestCorpus$' -args -update) and read line
# by line before they were checked in; pytest-color.want was also compared
# with pytest --color=no of the same tests (equal but for the timing). Run from anywhere: bash testdata/tidy/generate.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
real_home=$HOME
export HOME=$work/home LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC
mkdir -p "$HOME"
# pty runs: a fixed size, so layouts do not depend on the caller's terminal.
pty() { script -q -e -c "stty cols 100 rows 30; $1" /dev/null </dev/null; }

# ls: a directory with a subdirectory, an executable, a link, a plain file.
d=$work/listing && mkdir -p "$d/src" && touch "$d/README.md" "$d/notes.txt" && printf '#!/bin/sh\n' > "$d/run.sh" && chmod +x "$d/run.sh" && ln -s README.md "$d/link"
(cd "$d" && ls --color=always -1) > "$here/ls-color.in"
(cd "$d" && ls -1) > "$here/ls-color.want"
(cd "$d" && ls --color=always --hyperlink=always -1) > "$here/ls-hyperlink.in"
cp "$here/ls-color.want" "$here/ls-hyperlink.want"

# git log with colour, the pager off, in a repository of fixed dates.
g=$work/repo && git init -q -b main "$g"
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=A GIT_COMMITTER_EMAIL=a@example.com
for i in 1 2 3; do
  echo "$i" > "$g/f" && git -C "$g" add f
  GIT_AUTHOR_DATE="2026-01-0${i}T00:00:00Z" GIT_COMMITTER_DATE="2026-01-0${i}T00:00:00Z" git -C "$g" commit -qm "change $i"
done
git -C "$g" tag v1
git -C "$g" --no-pager log --color=always --graph --decorate --stat > "$here/git-log.in"
git -C "$g" --no-pager log --no-color --graph --decorate --stat > "$here/git-log.want"

# pytest -v with colour (a pass, a failure, a skip).
t=$work/tests && mkdir -p "$t"
cat > "$t/test_x.py" <<'PY'
import pytest
def test_pass(): assert 1 + 1 == 2
def test_fail(): assert [1, 2] == [1, 3]
@pytest.mark.skip(reason="not today")
def test_skip(): pass
PY
(cd "$t" && /usr/bin/python3 -m pytest --color=yes -v -p no:cacheprovider test_x.py || true) > "$here/pytest-color.in"

# go test -v on a terminal (go test has no colour of its own: the pty's \r\n is the point).
m=$work/mod && mkdir -p "$m" && printf 'module example.com/m\n\ngo 1.22\n' > "$m/go.mod"
printf 'package m\n\nimport "testing"\n\nfunc TestA(t *testing.T) { t.Log("hello") }\nfunc TestB(t *testing.T) { t.Run("sub", func(t *testing.T) {}) }\n' > "$m/m_test.go"
(cd "$m" && GOFLAGS=-mod=mod GOCACHE=$work/gocache pty 'go test -v -count=1 .') > "$here/go-test.in"

# cargo build of a new crate on a terminal: coloured status and a progress bar.
export RUSTUP_HOME=${RUSTUP_HOME:-$real_home/.rustup} CARGO_HOME=${CARGO_HOME:-$real_home/.cargo}
(cd "$work" && cargo new -q --vcs none hello && cd hello && CARGO_TARGET_DIR=$work/target pty 'cargo build --color=always') > "$here/cargo-build.in"

# npm install on a terminal: the spinner and progress redraws.
n=$work/npm && mkdir -p "$n" && echo '{"name":"x","version":"1.0.0"}' > "$n/package.json"
(cd "$n" && pty 'npm install --no-audit --no-fund --color=always is-number@7.0.0') > "$here/npm-install.in"

# apt-get download on a terminal: its progress line.
a=$work/apt && mkdir -p "$a"
(cd "$a" && pty 'apt-get download hello') > "$here/apt-download.in"

# tqdm is not installed here: a Python loop draws tqdm's bar the way tqdm does
# (\r, the bar in block characters, a rate), 100 steps, then leaves it.
/usr/bin/python3 - > "$here/tqdm-like.in" <<'PY'
import sys
for i in range(101):
    fill = i * 20 // 100
    bar = "\u2588" * fill + " " * (20 - fill)
    sys.stdout.write(f"\r{i:3d}%|{bar}| {i}/100 [00:0{i // 50}<00:00, 49.9it/s]")
    sys.stdout.flush()
sys.stdout.write("\n")
PY

# pip download-style (PyPI is not reachable from here): rich's bar as pip 23
# draws it, with the cursor hidden, colours, and 200 redraws of one line.
/usr/bin/python3 - > "$here/pip-download.in" <<'PY'
import sys
w = sys.stdout.write
w("Collecting requests\n  Downloading requests-2.31.0-py3-none-any.whl (62 kB)\n\x1b[?25l")
for i in range(1, 201):
    done = i * 40 // 200
    bar = "\x1b[38;2;249;38;114m" + "\u2501" * done + "\x1b[0m\x1b[38;5;237m" + "\u2501" * (40 - done) + "\x1b[0m"
    w(f"\r     {bar} \x1b[32m{i * 62 // 200}.0/62.0 kB\x1b[0m \x1b[31m1.2 MB/s\x1b[0m eta \x1b[36m0:00:00\x1b[0m")
w("\n\x1b[?25hSaved ./requests-2.31.0-py3-none-any.whl\nSuccessfully downloaded requests\n")
PY

# A binary file cat'ed.
cat /bin/true > "$here/true.bin"
