// Command shellsup-compare runs the same leak shapes under shellsup and under the tools people
// reach for instead — timeout(1), tini, systemd-run --scope, bubblewrap, Python's subprocess,
// Go's os/exec — side by side in one run, and prints a Markdown table (make compare): for each
// tool and shape, how many of the shape's processes are still alive after the tool returned,
// and how long the tool took to return; for a flood of output, how many bytes reached the
// caller.
//
// Every process of a trial carries a fresh token in its environment (reapertest); the ones
// still alive 250 ms after the tool returned are counted, then SIGKILLed through a pidfd after
// re-checking the token (reapertest.Kill): nothing but what this program started is touched.
// A tool that has not returned after --cap is reported so and ended. A tool that is not
// installed (or systemd-run without a running systemd) gets a row saying so. Linux only.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/reaper/reapertest"
)

var (
	bin      = flag.String("bin", "bin/shellsup", "the shellsup binary")
	python   = flag.String("python", "python3", "a Python for the subprocess row (empty: the row is skipped)")
	deadline = flag.Duration("deadline", 2*time.Second, "the deadline every tool is given")
	capWait  = flag.Duration("cap", 10*time.Second, "how long to wait for a tool to return before giving up on it")
	home     string
)

// killAfter is the grace after the deadline: timeout -k 1, shellsup --grace 1, WaitDelay 1 s.
const killAfter = time.Second

// settle is how long after a tool returned its leftovers are counted, so that a process the
// tool killed as it returned is not counted while it is still exiting.
const settle = 250 * time.Millisecond

// A shape is a command that leaves something behind, run as bash -c SCRIPT by every tool.
type shape struct {
	name, script string
	flood        bool // the cell reports the bytes that reached the caller
}

var shapes = []shape{
	{"`setsid` sleeper", `setsid sleep 300 >/dev/null 2>&1 & echo started`, false},
	{"double fork", `(sleep 300 >/dev/null 2>&1 &); echo started`, false},
	{"background job holding stdout", `sleep 300 & echo started`, false},
	{"`nohup`", `nohup sleep 300 >/dev/null 2>&1 & echo started`, false},
	{"TERM-ignorer past the deadline", `trap "" TERM; echo started; sleep 300; echo never`, false},
	{"64 MiB of output", `head -c 67108864 /dev/zero`, true},
}

func main() {
	flag.Parse()
	var err error
	if home, err = os.MkdirTemp("", "shellsup-compare-home-"); err != nil {
		fatal(err)
	}
	defer os.RemoveAll(home)
	if *bin, err = filepath.Abs(*bin); err != nil {
		fatal(err)
	}
	// Orphans of a trial come to this process, which reaps them (reapertest.Kill).
	if err := reapertest.BecomeSubreaper(); err != nil {
		fatal(fmt.Errorf("becoming a child subreaper: %w", err))
	}
	header()
	for _, t := range tools() {
		printRow(t)
	}
	fmt.Printf("\nEach cell: processes of the shape still alive %v after the tool returned · time to return.\n", settle)
	fmt.Printf("The flood column: bytes that reached the caller (stdout and stderr) · time to return.\n")
}

// header says when, where and with which deadline the table was measured.
func header() {
	host, _ := os.Hostname()
	fmt.Printf("shellsup compare: %s, %s, %d cores, kernel %s, uid %d, host %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOARCH, runtime.NumCPU(), kernel(), os.Getuid(), host)
	fmt.Printf("deadline %v, kill after %v more; a tool not back after %v is given up on; load average at start %s\n\n",
		*deadline, killAfter, *capWait, loadavg())
	cols := []string{"tool"}
	for _, s := range shapes {
		cols = append(cols, s.name)
	}
	fmt.Println("| " + strings.Join(cols, " | ") + " |")
	fmt.Println("|" + strings.Repeat("---|", len(cols)))
}

// printRow measures every shape under t, or says why t was not measured.
func printRow(t tool) {
	cells := []string{t.name}
	for _, s := range shapes {
		switch {
		case t.missing != "":
			cells = append(cells, "—")
		default:
			cells = append(cells, measure(t, s))
		}
	}
	if t.missing != "" {
		cells = []string{t.name, "not measured: " + t.missing}
		for range shapes[1:] {
			cells = append(cells, "")
		}
	}
	fmt.Println("| " + strings.Join(cells, " | ") + " |")
}

// measure runs one shape under one tool and returns its cell.
func measure(t tool, s shape) string {
	tok := reapertest.NewToken()
	tr, err := t.start(s.script, tok)
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), "|", `\|`)
	}
	var elapsed time.Duration
	hung := false
	select {
	case elapsed = <-tr.returned:
	case <-time.After(*capWait):
		hung = true
	}
	time.Sleep(settle)
	left := 0
	for _, p := range reapertest.Find(tok, tr.owned...) {
		if p.Why == "token" {
			left++
		}
	}
	if hung {
		tr.abort()
	}
	reapertest.Kill(tok)
	if hung {
		select {
		case <-tr.returned:
		case <-time.After(5 * time.Second):
		}
	}
	return cell(s, left, elapsed, hung, tr.output())
}

// cell formats one measurement; a tool that did not run the command (no "started", no
// flood) is said so, with the first line it printed, rather than counted as leaving nothing.
func cell(s shape, left int, elapsed time.Duration, hung bool, out output) string {
	when := fmt.Sprintf("%.2f s", elapsed.Seconds())
	if hung {
		when = fmt.Sprintf("**not back after %v**", *capWait)
	}
	ran := strings.Contains(out.head, "started")
	if s.flood {
		ran = out.n >= 64<<10
	}
	if !ran {
		first, _, _ := strings.Cut(strings.TrimSpace(out.head), "\n")
		return "did not run the command: " + strings.ReplaceAll(first, "|", `\|`)
	}
	if s.flood {
		return size(out.n) + " · " + when
	}
	return fmt.Sprintf("%d left · %s", left, when)
}

// size formats a byte count as whole MiB or KiB plus the bytes left over (64 MiB + 100 B).
func size(n int64) string {
	switch {
	case n < 0:
		return "?"
	case n >= 1<<20:
		return withRest(n>>20, "MiB", n%(1<<20))
	case n >= 1<<10:
		return withRest(n>>10, "KiB", n%(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func withRest(whole int64, unit string, rest int64) string {
	if rest == 0 {
		return fmt.Sprintf("%d %s", whole, unit)
	}
	return fmt.Sprintf("%d %s + %d B", whole, unit, rest)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "shellsup-compare:", err)
	os.Exit(1)
}

// loadavg is the 1-, 5- and 15-minute load average, from /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
