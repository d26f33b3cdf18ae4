package main

import (
	"os"
	"path/filepath"
)

// shape is a way a command leaves processes behind, as in the integration suite
// (cmd/shellsup/shapes_test.go). setup runs in bash and leaves them running.
type shape struct {
	name  string
	setup string
	slow  bool // needs more time before a timeout
}

// shapes lists every leak shape of the integration suite, plus a fast forker with a hard cap.
// dir holds the scripts and ready files they need.
func shapes(dir string) ([]shape, error) {
	chain := filepath.Join(dir, "chain.sh")
	if err := os.WriteFile(chain, []byte("#!/bin/bash\nif [ \"$1\" -gt 0 ]; then \"$0\" $(( $1 - 1 )); exit $?; fi\nexec sleep 300\n"), 0o755); err != nil {
		return nil, err
	}
	return []shape{
		{name: "background job", setup: "sleep 300 &"},
		{name: "subshell", setup: "(sleep 300; true) &"},
		{name: "pipeline", setup: "sleep 300 | cat &"},
		{name: "setsid", setup: "setsid sleep 300 &"},
		{name: "double fork", setup: "( (setsid sleep 300 </dev/null >/dev/null 2>&1 &) & )"},
		{name: "nohup disown", setup: "nohup sleep 300 >/dev/null 2>&1 & disown"},
		{name: "TERM ignorer", setup: "(trap '' TERM HUP INT; while :; do sleep 1; done) &"},
		{name: "stopped", setup: "sleep 300 & kill -STOP $! && while ! grep -q '^State:.T' /proc/$!/status; do :; done"},
		{name: "set -m jobs", setup: "set -m; sleep 300 & sleep 300 & set +m"},
		{name: "50 deep", setup: chain + " 50 & until [ \"$(pgrep -s 0 -c -x sleep)\" -ge 1 ]; do sleep 0.01; done", slow: true},
		{name: "300 wide", setup: "for i in $(seq 300); do sleep 300 & done", slow: true},
		{name: "zombie maker", setup: "sh -c 'for i in 1 2 3 4 5; do true & done; exec sleep 300' &"},
		{name: "non-leader thread fork", setup: inBackground(helperCommand("thread-fork"), filepath.Join(dir, "thread-fork"))},
		{name: "nested subreaper", setup: helperCommand("subreaper-orphans")},
		{name: "fast forker (cap 4000)", setup: "(trap '' TERM; i=0; while [ $i -lt 4000 ]; do (sleep 0.05 &); i=$((i+1)); done) &"},
	}, nil
}

// inBackground runs a helper in the background and waits until it has set itself up. Each run
// removes the ready file first (see run).
func inBackground(helper, readyFile string) string {
	return "rm -f " + readyFile + "; SHELLSUP_SOAK_READY=" + readyFile + " " + helper + " & while [ ! -e " + readyFile + " ]; do sleep 0.01; done"
}
