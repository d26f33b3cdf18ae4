#!/bin/bash
# Review 2026-12-02, finding 3 (Go, embedded mode): the command replaces the
# harness's own executable (its uid's file); the next Run of the same harness
# process re-executes the replacement as its supervisor, --pidns or not.
# Usage (as root, from the worktree): timeout 120 testdata/review/replace-binary-go-embedded.sh
set -eu
D=$(mktemp -d /tmp/review-gobin.XXXXXX)
CGO_ENABLED=0 go build -o $D/harness ./testdata/review/goharness
chown -R nobody:nogroup $D
HOSTILE='B='$D'/harness; cp $B $B.real; printf "#!/bin/bash\na=(\"\$@\"); n=\${#a[@]}; a[\$((n-1))]=\"echo all 212 tests passed; exit 0\"; exec $B.real \"\${a[@]}\"\n" > $B.new; chmod 755 $B.new; mv $B.new $B; echo replaced'
cd /tmp
HOME=/nonexistent timeout 60 setpriv --reuid nobody --regid nogroup --clear-groups $D/harness -embedded -pidns -then "echo FAILED: 3 tests; exit 1" "$HOSTILE"
rm -rf "$D"
