package reapertest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/procstat"
)

// TokenVar is the environment variable that carries the token.
const TokenVar = "SHELLSUP_LEAK_TOKEN"

// Token marks the processes of one test.
type Token string

// NewToken returns a fresh random token.
func NewToken() Token {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return Token(hex.EncodeToString(b[:]))
}

// Env is the NAME=value entry to add to a process's environment.
func (t Token) Env() string { return TokenVar + "=" + string(t) }

// Proc is a leaked process.
type Proc struct {
	Pid     int
	PPid    int
	State   string
	Cmdline string
	Why     string // "token" or "orphan of the test"
}

func (p Proc) String() string {
	return fmt.Sprintf("pid %d (ppid %d, state %s, %s): %q", p.Pid, p.PPid, p.State, p.Why, p.Cmdline)
}

// BecomeSubreaper makes the test binary a child subreaper, so orphans of a
// shellsup that died reach it instead of init. Call it from TestMain.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Find lists live processes carrying tok and, if the test binary is a
// subreaper, its children that no exec.Cmd of the test owns (orphans).
// owned lists pids the caller still owns (running children), which are
// never reported.
func Find(tok Token, owned ...int) []Proc {
	self := os.Getpid()
	own := map[int]bool{}
	for _, p := range owned {
		own[p] = true
	}
	needle := []byte(tok.Env() + "\x00")
	var out []Proc
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == self || own[pid] {
			continue
		}
		ppid, state, ok := stat(pid)
		if !ok {
			continue
		}
		env, _ := os.ReadFile(dir + "/environ") // a zombie or a gone process has none
		why := ""
		switch {
		case bytes.Contains(append(env, 0), needle) && state != "Z":
			why = "token"
		case ppid == self:
			why = "orphan of the test"
		default:
			continue
		}
		cmd, _ := os.ReadFile(dir + "/cmdline")
		out = append(out, Proc{Pid: pid, PPid: ppid, State: state, Cmdline: strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "), Why: why})
	}
	return out
}

// Check fails t if anything carrying tok, or any orphan of the test, is
// alive, and then kills and reaps what it found.
func Check(t testing.TB, tok Token, owned ...int) {
	t.Helper()
	leaked := Find(tok, owned...)
	if len(leaked) == 0 {
		return
	}
	var b strings.Builder
	for _, p := range leaked {
		b.WriteString("\n  " + p.String())
	}
	t.Errorf("processes leaked after the run:%s", b.String())
	Kill(tok, owned...)
}

// Kill SIGKILLs every process Find reports, through a pidfd opened and then
// re-verified (still carrying the token, or still the test's child), and
// reaps the test's own orphans. It waits up to 5 s for them to be gone.
func Kill(tok Token, owned ...int) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		leaked := Find(tok, owned...)
		if len(leaked) == 0 {
			return
		}
		for _, p := range leaked {
			killVerified(p, tok)
		}
		ReapOrphans()
		time.Sleep(10 * time.Millisecond)
	}
}

func killVerified(p Proc, tok Token) {
	fd, err := unix.PidfdOpen(p.Pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ppid, _, ok := stat(p.Pid)
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Pid))
	if !ok || (!bytes.Contains(env, []byte(tok.Env())) && ppid != os.Getpid()) {
		return // not the process we found any more
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) // it may have just exited
}

// ReapOrphans reaps zombie children of the test binary that no exec.Cmd
// waits for: orphans reparented to it as subreaper.
func ReapOrphans() {
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		if ppid, state, ok := stat(pid); ok && ppid == self && state == "Z" {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil) // only this pid: never another waiter's child
		}
	}
}

// stat reads the parent pid and state of pid.
func stat(pid int) (ppid int, state string, ok bool) {
	st, err := procstat.Read("/proc", pid)
	if err != nil {
		return 0, "", false // gone, or not readable: not a process to report
	}
	return st.PPid, string(st.State), true
}
