#!/bin/bash
# Review 2026-12-02, finding 8: the command's oom_score_adj 500 is undone by the
# command itself (to 0, shellsup's own value), as nobody and under --user nobody.
# Usage (as root, from the worktree): timeout 40 testdata/review/oom-score-undone.sh
BIN=${SHELLSUP_BIN:-$PWD/bin/shellsup}
CMD='echo "start $(cat /proc/self/oom_score_adj)"; echo 0 > /proc/self/oom_score_adj && echo "lowered to $(cat /proc/self/oom_score_adj)"'
cd /tmp
HOME=/nonexistent timeout 20 setpriv --reuid nobody --regid nogroup --clear-groups "$BIN" -- "$CMD"
HOME=/nonexistent timeout 20 "$BIN" --user nobody -- "$CMD"
