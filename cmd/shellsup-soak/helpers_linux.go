package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/procstat"
	"github.com/shellsup/shellsup/protocol"
)

// The soak binary doubles as the helper programs of some shapes and of the parent-death ending:
// run with SHELLSUP_SOAK_HELPER=name, it acts as that helper. Every helper exits by itself after
// helperLifetime.
const (
	helperVar      = "SHELLSUP_SOAK_HELPER"
	helperLifetime = 60 * time.Second
)

var helpers = map[string]func(args []string){
	"thread-fork":       helperThreadFork,
	"subreaper-orphans": helperSubreaperOrphans,
	"parent":            helperParent,
}

func runHelper(name string) {
	time.AfterFunc(helperLifetime, func() { os.Exit(3) })
	h, ok := helpers[name]
	if !ok {
		helperFail("unknown helper %q", name)
	}
	h(os.Args[1:])
	os.Exit(0)
}

func helperFail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "shellsup-soak helper: "+format+"\n", a...)
	os.Exit(1)
}

// helperCommand is the shell text that runs helper name.
func helperCommand(name string) string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return helperVar + "=" + name + " " + strconv.Quote(exe)
}

// helperThreadFork forks `sleep 300` from a thread that is not the process's leader, so the child
// is listed only in that thread's /proc/PID/task/TID/children file.
func helperThreadFork([]string) {
	done := make(chan int)
	for {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must live on
			if unix.Gettid() == os.Getpid() {
				done <- 0
				return
			}
			p, err := os.StartProcess("/bin/sleep", []string{"sleep", "300"}, &os.ProcAttr{})
			if err != nil {
				helperFail("start: %v", err)
			}
			done <- p.Pid
			select {}
		}()
		if <-done != 0 {
			break
		}
	}
	ready()
	time.Sleep(helperLifetime)
}

// helperSubreaperOrphans sets its own subreaper bit, adopts an orphaned `sleep 300`, and exits:
// the orphan must then reach shellsup.
func helperSubreaperOrphans([]string) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		helperFail("prctl: %v", err)
	}
	out, err := exec.Command("/bin/sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		helperFail("sh: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	for deadline := time.Now().Add(10 * time.Second); ppidOf(pid) != os.Getpid(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			helperFail("the orphan %d was not adopted", pid)
		}
	}
}

// helperParent runs shellsup (args) as a harness would, holding its stdin, prints "ready PID"
// once the command said "ready", and waits to be killed.
func helperParent(args []string) {
	cmd := exec.Command(args[0], args[1:]...)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		helperFail("start: %v", err)
	}
	dec := protocol.NewDecoder(out)
	var text strings.Builder
	for !strings.Contains(text.String(), "ready") {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			helperFail("decode: %v", err)
		}
		if p, ok := f.(*protocol.Progress); ok {
			text.WriteString(p.Text)
		}
	}
	fmt.Printf("ready %d\n", cmd.Process.Pid)
	_ = stdin // held open until this process is killed
	time.Sleep(helperLifetime)
}

// ready creates the file SHELLSUP_SOAK_READY names, if any.
func ready() {
	if f := os.Getenv("SHELLSUP_SOAK_READY"); f != "" {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			helperFail("ready: %v", err)
		}
	}
}

func ppidOf(pid int) int {
	st, err := procstat.Read("/proc", pid)
	if err != nil {
		return -1
	}
	return st.PPid
}
