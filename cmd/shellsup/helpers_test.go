//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
)

// The test binary doubles as the helper programs below (os/exec's own
// tests do the same): started through helpers.Shell or helpers.Command, it
// acts as that helper instead of running tests. Every helper exits by
// itself after proctest.Lifetime, so a failing test cannot leak it for
// long; a helper no test starts fails the full run.
var helpers = proctest.NewHelpers("SHELLSUP_TEST_HELPER")

func init() {
	for name, main := range map[string]func(args []string){
		"zombies":           helperZombies,
		"thread-fork":       helperThreadFork,
		"subreaper-orphans": helperSubreaperOrphans,
		"exec-shellsup":     helperExecShellsup,
		"parent":            helperParent,
	} {
		helpers.Register(name, func(args []string) int { main(args); return 0 })
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "helper: "+format+"\n", a...)
	os.Exit(1)
}

// helperZombies makes 20 children that exit at once and are never waited
// for, then sleeps: a zombie maker.
func helperZombies(args []string) {
	for i := 0; i < 20; i++ {
		if _, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{}); err != nil {
			fail("start: %v", err)
		}
	}
	waitState("/bin/true children to become zombies", func() bool { return len(proctest.Children(os.Getpid(), 'Z')) == 20 })
	ready()
	time.Sleep(proctest.Lifetime)
}

// helperThreadFork forks `sleep 300` from a thread that is not the
// process's leader, so the child is listed only in that thread's
// /proc/PID/task/TID/children file.
func helperThreadFork(args []string) {
	done := make(chan int)
	for {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must live on
			tid := unix.Gettid()
			if tid == os.Getpid() {
				done <- 0
				return
			}
			p, err := os.StartProcess("/bin/sleep", []string{"sleep", "300"}, &os.ProcAttr{})
			if err != nil {
				fail("start: %v", err)
			}
			kids, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/children", tid))
			if !strings.Contains(" "+string(kids), " "+strconv.Itoa(p.Pid)+" ") {
				fail("child %d not listed under thread %d: %q", p.Pid, tid, kids)
			}
			lead, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/children", os.Getpid()))
			if strings.Contains(" "+string(lead), " "+strconv.Itoa(p.Pid)+" ") {
				fail("child %d is listed under the leader thread too", p.Pid)
			}
			done <- p.Pid
			select {}
		}()
		if <-done != 0 {
			break
		}
	}
	ready()
	time.Sleep(proctest.Lifetime)
}

// helperSubreaperOrphans sets its own subreaper bit, adopts an orphaned
// `sleep 300`, and exits: the orphan must then reach shellsup.
func helperSubreaperOrphans(args []string) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fail("prctl: %v", err)
	}
	out, err := exec.Command("/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		fail("sh: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	waitState("the orphan to be adopted", func() bool { return proctest.PPid(pid) == os.Getpid() })
	ready()
}

// helperExecShellsup becomes shellsup in a hostile inherited state: SIGINT,
// SIGHUP and SIGPIPE ignored, several signals blocked, and three extra fds
// open without close-on-exec, on the file SHELLSUP_TEST_CANARY names.
func helperExecShellsup(args []string) {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	for i := 0; i < 3; i++ {
		if _, err := unix.Open(os.Getenv("SHELLSUP_TEST_CANARY"), unix.O_RDONLY|unix.O_CREAT, 0o644); err != nil { // deliberately no O_CLOEXEC
			fail("open: %v", err)
		}
	}
	runtime.LockOSThread()
	var set unix.Sigset_t
	for _, s := range []unix.Signal{unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM, unix.SIGTERM, unix.SIGQUIT, unix.SIGWINCH} {
		set.Val[(s-1)/64] |= 1 << ((s - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		fail("sigmask: %v", err)
	}
	fail("exec: %v", unix.Exec(os.Getenv("SHELLSUP_TEST_BIN"), append([]string{"shellsup"}, args...), os.Environ()))
}

// helperParent runs shellsup as a harness would, holding its stdin (the
// control channel), prints "ready PID" once the command said "ready", and
// then waits to be killed.
func helperParent(args []string) {
	cmd := exec.Command(os.Getenv("SHELLSUP_TEST_BIN"), args...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fail("start: %v", err)
	}
	dec := protocol.NewDecoder(out)
	var text strings.Builder
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			fail("decode: %v", err)
		}
		if p, ok := f.(*protocol.Progress); ok {
			text.WriteString(p.Text)
			if strings.Contains(text.String(), "ready") {
				fmt.Printf("ready %d\n", cmd.Process.Pid)
				break
			}
		}
	}
	_ = stdin // held open until this process is killed
	time.Sleep(proctest.Lifetime)
}

// ready tells whoever started the helper that it is set up: it creates the
// file named by SHELLSUP_TEST_READY, if any.
func ready() {
	if f := os.Getenv("SHELLSUP_TEST_READY"); f != "" {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			fail("ready: %v", err)
		}
	}
}

// waitState polls cond for up to 10 s.
func waitState(what string, cond func() bool) {
	if !proctest.Await(10*time.Second, cond) {
		fail("timed out waiting for %s", what)
	}
}

// readLine reads one line from r with a deadline.
func readLine(r *bufio.Reader, d time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	c := make(chan res, 1)
	go func() { s, err := r.ReadString('\n'); c <- res{s, err} }()
	select {
	case v := <-c:
		return v.s, v.err
	case <-time.After(d):
		return "", fmt.Errorf("no line within %v", d)
	}
}
