package supervisor

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/protocol"
)

// defaultTerm is TERM on a --pty run whose environment has none.
const defaultTerm = "TERM=xterm-256color"

// openStdioFor opens what the child gets as fds 0, 1 and 2: a new
// pseudo-terminal (--pty), an input pipe and the output pipes (--stdin
// pipe), or /dev/null and the output pipes.
func openStdioFor(cfg Config) (*stdio, error) {
	switch {
	case cfg.PTY:
		return openTerminal(cfg.Cols, cfg.Rows)
	case cfg.StdinPipe:
		return openStdinPipe()
	}
	return openStdio()
}

// openTerminal opens a pseudo-terminal of cols x rows. The child gets its
// slave as fds 0, 1 and 2; shellsup reads the output from the master (one
// stream, stdout) and writes input to it. stderr is a pipe already at EOF.
func openTerminal(cols, rows int) (*stdio, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	fail := func(err error) (*stdio, error) {
		master.Close() // fresh and unused: a failed close loses nothing
		slave.Close()
		return nil, err
	}
	if err := pty.Setsize(master, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		return fail(fmt.Errorf("set the pseudo-terminal's size to %dx%d: %w", cols, rows, err))
	}
	var st unix.Stat_t
	if err := linux.Fstat(int(slave.Fd()), &st); err != nil {
		return fail(fmt.Errorf("stat the pseudo-terminal %s: %w", slave.Name(), err))
	}
	errR, errW, err := outputPipe()
	if err != nil {
		return fail(err)
	}
	unix.Close(errW) // nothing writes stderr: the terminal is one stream
	return &stdio{outR: master, errR: errR, outW: -1, errW: -1, tty: slave, ttyDev: st.Rdev, in: master, inIsTTY: true}, nil
}

// openStdinPipe is openStdio with an input pipe for bash's stdin instead of
// /dev/null. shellsup's write end is non-blocking and pollable, so that a
// write waiting for the command to read can be given up at the ending.
func openStdinPipe() (*stdio, error) {
	var p [2]int
	if err := linux.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	if err := linux.SetNonblock(p[1], true); err != nil {
		unix.Close(p[0]) // fresh and unused: a failed close loses nothing
		unix.Close(p[1])
		return nil, err
	}
	sio, err := openStdio()
	if err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, err
	}
	sio.devnull.Close() // read-only /dev/null, replaced by the pipe
	sio.devnull = os.NewFile(uintptr(p[0]), "stdin")
	sio.in = os.NewFile(uintptr(p[1]), "stdin-w")
	return sio, nil
}

// sink is where input frames go once the child runs; pgrp is bash's
// process group (its pid: bash leads a session of its own).
func (s *stdio) sink(pgrp int) *inputSink {
	if s.in == nil {
		return nil
	}
	in := &inputSink{f: s.in, tty: s.inIsTTY, ttyDev: s.ttyDev, pgrp: pgrp, queue: make(chan protocol.Frame, maxQueued), done: make(chan struct{})}
	in.qcond = sync.NewCond(&in.qmu)
	return in
}

// withTerm sets TERM=xterm-256color on a --pty run's environment that has
// no TERM.
func withTerm(env []string, cfg Config) []string {
	if !cfg.PTY {
		return env
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "TERM=") {
			return env
		}
	}
	return append(env, defaultTerm)
}
