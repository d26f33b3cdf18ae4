#!/bin/bash
# Review 4: a process of another uid (nobody) plants, in shellsup's TMPDIR
# parent, a directory named like a private TMPDIR of a gone shellsup (a real
# stale tag), holding links to root's files and directories, a mode-0
# directory and a directory that is root's: root's `shellsup sweep` must
# remove only what nobody could remove, and change nothing outside.
# Isolation: the sweep's TMPDIR is a sticky directory this script makes, and
# the sweep runs in private cgroups (so it sweeps no one else's leaves).
# Usage (root): sweep-planted-tmpdir.sh
set -u
BIN=${SHELLSUP:-$(cd "$(dirname "$0")/../.." && pwd)/bin/shellsup}
P=$(mktemp -d /tmp/eh-review4-sw.XXXXXX); chmod 1777 "$P"
V=$(mktemp -d /tmp/eh-review4-victim.XXXXXX); chmod 755 "$V"; mkdir "$V/dir"; echo secret > "$V/file"; chmod 600 "$V/file"; chmod 700 "$V/dir"
CG="/sys/fs/cgroup/unified/review4-sw /sys/fs/cgroup/pids/review4-sw /sys/fs/cgroup/memory/review4-sw"
mkdir -p $CG
cleanup() { rm -rf "$P" "$V"; for c in $CG; do rmdir $c 2>/dev/null; done; }
trap cleanup EXIT
# a real stale tag: that of a shellsup that has exited
T=$(TMPDIR=$P HOME=/tmp timeout 10 "$BIN" --no-login --quiet --sandbox read-only -- 'echo $TMPDIR')
TAG=${T##*/shellsup-tmp-}; TAG=${TAG%-*}
N=$P/shellsup-tmp-$TAG-7
timeout 10 setpriv --reuid nobody --regid nogroup --clear-groups bash -c "
mkdir $N && cd $N && ln -s $V/file lnfile && ln -s $V/dir lndir && mkdir -p zero/inner && touch zero/inner/f && chmod 0 zero && mkfifo ff
ln $V/file hard 2>/dev/null || echo '  (a hard link to root'\''s file: refused, protected_hardlinks)'"
mkdir "$N/rootdir"; echo keep > "$N/rootdir/kept"; chmod 755 "$N/rootdir"  # root's, inside nobody's tree
echo "planted: $(ls -la $N | tail -n +2 | wc -l) entries; before: $(stat -c '%U %a' $V/file $V/dir | tr '\n' ' ')"
timeout 20 bash -c 'for c in '"$CG"'; do echo $$ > $c/cgroup.procs; done; cd /tmp; TMPDIR='"$P"' HOME=/tmp exec "$0" sweep' "$BIN" 2>&1 | grep -i tmpdir
echo "after:  $(stat -c '%U %a' $V/file $V/dir | tr '\n' ' ') content=$(cat $V/file); left in $N: $(find $N 2>/dev/null | tail -n +2 | tr '\n' ' ')"
[ "$(cat $V/file)" = secret ] && [ "$(stat -c %a $V/file $V/dir | tr '\n' ' ')" = "600 700 " ] && echo held || echo BROKEN
