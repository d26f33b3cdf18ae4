// Command shellsup-soak runs shellsup many times in a row (make soak), cycling through every leak
// shape of the integration suite, each ending (finish, timeout, cancel, parent death) and each
// containment tier asked for, and checks after every run:
//
//   - no process carries the run's leak token, and no zombie or orphan is left with the soak
//     (which is a subreaper, so whatever escapes shellsup lands here);
//   - the run ended as its ending says (exit status, totals, no stragglers);
//   - shellsup's open fds, counted at a fixed point (when the command says "ready"), are the same
//     in the last cycle as in the first, per shape, ending and tier;
//   - shellsup's own peak RSS (VmHWM, sampled until it exits; rusage would count its children)
//     does not grow from the first half of the runs to the
//     second;
//   - the soak's own fds and goroutines are flat after the first cycle.
//
// It prints a one-screen report and exits 1 on any leak, failed run or growth. Linux only.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/linux"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The endings of a run.
const (
	endFinish      = "finish"
	endTimeout     = "timeout"
	endCancel      = "cancel"
	endParentDeath = "parent-death"
)

var endings = []string{endFinish, endTimeout, endCancel, endParentDeath}

// tierArgs maps each containment tier the soak knows to the shellsup options that force it (the
// same options `make test-tiers` adds to every run).
var tierArgs = map[string][]string{
	"subreaper": {"--no-cgroup"},
	"cgroup":    {"--require", "cgroup"},
	"pidns":     {"--pidns"},
}

var (
	bin      = flag.String("bin", "bin/shellsup", "the shellsup binary")
	runs     = flag.Int("runs", 1000, "consecutive runs")
	tiers    = flag.String("tiers", "subreaper", "comma-separated containment tiers to cycle through")
	grace    = flag.String("grace", "0.3", "shellsup --grace for every run")
	verbose  = flag.Bool("v", false, "print every run")
	home     string // an empty HOME: a login shell then skips a heavy ~/.profile
	scratch  string
	selfPid  = os.Getpid()
	clkStart = time.Now()
)

func main() {
	if name := os.Getenv(helperVar); name != "" {
		runHelper(name) // never returns
	}
	flag.Parse()
	os.Exit(soak())
}

func soak() int {
	tierList, err := parseTiers(*tiers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shellsup-soak:", err)
		return 2
	}
	if *runs < 1 {
		fmt.Fprintf(os.Stderr, "shellsup-soak: --runs must be at least 1 (got %d)\n", *runs)
		return 2
	}
	if *bin, err = filepath.Abs(*bin); err != nil {
		fmt.Fprintln(os.Stderr, "shellsup-soak:", err)
		return 2
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "shellsup-soak: becoming a subreaper:", err)
		return 2
	}
	if scratch, err = os.MkdirTemp("", "shellsup-soak-"); err != nil {
		fmt.Fprintln(os.Stderr, "shellsup-soak:", err)
		return 2
	}
	defer os.RemoveAll(scratch)
	home = filepath.Join(scratch, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "shellsup-soak:", err)
		return 2
	}
	shs, err := shapes(scratch)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shellsup-soak: writing the shapes' scripts:", err)
		return 2
	}
	var combos []combo
	for _, t := range tierList {
		for _, s := range shs {
			for _, e := range endings {
				combos = append(combos, combo{shape: s, ending: e, tier: t})
			}
		}
	}
	rep := newReport(len(combos))
	for i := 0; i < *runs; i++ {
		c := combos[i%len(combos)]
		o := run(i, c)
		rep.add(i, c, o)
		if *verbose || o.problem() != "" {
			fmt.Fprintf(os.Stderr, "run %d %s: wall %v fds %d peak RSS %d KiB %s\n", i, c.key(), o.wall.Round(time.Millisecond), o.fds, o.hwm, o.problem())
		} else if (i+1)%100 == 0 {
			fmt.Fprintf(os.Stderr, "shellsup-soak: %d runs, %v\n", i+1, time.Since(clkStart).Round(time.Second))
		}
	}
	return rep.print(tierList)
}

func parseTiers(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if _, ok := tierArgs[t]; !ok {
			known := make([]string, 0, len(tierArgs))
			for k := range tierArgs {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("unknown tier %q in --tiers (allowed: %s)", t, strings.Join(known, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// combo is one cell of the cycle.
type combo struct {
	shape  shape
	ending string
	tier   string
}

func (c combo) key() string { return c.tier + "/" + c.shape.name + "/" + c.ending }

// outcome is what one run showed.
type outcome struct {
	wall     time.Duration // from start to shellsup reaped
	overhead time.Duration // wall minus the totals' durationMs (not for parent death)
	cleanup  time.Duration // totals' cleanup ms; for parent death, from the kill to shellsup reaped
	fds      int           // shellsup's open fds when the command said ready, -1 if never read
	hwm      int64         // shellsup's own peak RSS (VmHWM), KiB, sampled until it exited
	leaked   []reapertest.Proc
	zombies  int
	failure  string
	harnFds  int
	harnGor  int
}

func (o outcome) problem() string {
	var p []string
	if o.failure != "" {
		p = append(p, "FAILED: "+o.failure)
	}
	if len(o.leaked) > 0 {
		p = append(p, fmt.Sprintf("LEAKED %d: %v", len(o.leaked), o.leaked))
	}
	if o.zombies > 0 {
		p = append(p, fmt.Sprintf("ZOMBIES %d", o.zombies))
	}
	return strings.Join(p, "; ")
}

// command is the shell text of a run: the shape, "ready", a wait for the go file (which the soak
// creates once it has counted shellsup's fds, so every run is counted at the same point), then
// the ending's own tail.
func command(c combo, goFile string) string {
	tail := "sleep 300"
	if c.ending == endFinish {
		tail = "exit 7"
	}
	return c.shape.setup + "\necho ready\nfor i in $(seq 1200); do [ -e " + goFile + " ] && break; sleep 0.05; done\n" + tail
}

func shellsupArgs(c combo, cmdText string) []string {
	timeout := "60"
	if c.ending == endTimeout {
		timeout = "1.5"
		if c.shape.slow {
			timeout = "5"
		}
	}
	args := append([]string{"--frames", "--grace", *grace, "--timeout", timeout}, tierArgs[c.tier]...)
	return append(args, "--", cmdText)
}

func env(tok reapertest.Token) []string {
	out := []string{tok.Env(), "HOME=" + home}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, reapertest.TokenVar+"=") && !strings.HasPrefix(kv, helperVar+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// run does run i and checks what it left.
func run(i int, c combo) outcome {
	tok := reapertest.NewToken()
	goFile := filepath.Join(scratch, "go-"+strconv.Itoa(i))
	defer os.Remove(goFile)
	args := shellsupArgs(c, command(c, goFile))
	var o outcome
	if c.ending == endParentDeath {
		o = runParentDeath(tok, args, goFile)
	} else {
		o = runDirect(c, tok, args, goFile)
	}
	for _, p := range reapertest.Find(tok) {
		if p.State == "Z" {
			o.zombies++
		} else {
			o.leaked = append(o.leaked, p)
		}
	}
	if len(o.leaked) > 0 || o.zombies > 0 {
		reapertest.Kill(tok)
	}
	reapertest.ReapOrphans()
	o.harnFds = countFds(selfPid)
	o.harnGor = settledGoroutines()
	return o
}

// settledGoroutines is the soak's goroutine count once the run's transient
// ones (a cancel timer firing after the run ended, say) have had a moment
// to finish: the least of a few samples 10 ms apart. A goroutine that
// leaked stays in every sample.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		time.Sleep(10 * time.Millisecond)
		n = min(n, runtime.NumGoroutine())
	}
	return n
}

// runDirect runs shellsup as the soak's child: finish, timeout and cancel.
func runDirect(c combo, tok reapertest.Token, args []string, goFile string) outcome {
	o := outcome{fds: -1}
	cmd := exec.Command(*bin, args...)
	cmd.Env = env(tok)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		o.failure = err.Error()
		return o
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		o.failure = err.Error()
		return o
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	began := time.Now()
	if err := cmd.Start(); err != nil {
		o.failure = err.Error()
		return o
	}
	hwm := make(chan int64, 1)
	go func() { hwm <- sampleUntilExit(cmd.Process.Pid) }()
	tot, readySeen, decErr := directFrames(c, cmd, out, stdin, goFile, &o)
	o.hwm = <-hwm  // shellsup has exited; not reaped yet, so its pid is still its own
	_ = cmd.Wait() // the status is checked below
	o.wall = time.Since(began)
	stdin.Close()
	o.failure = checkDirect(c, cmd.ProcessState.ExitCode(), tot, decErr, readySeen, stderr.String())
	if tot != nil {
		o.overhead = o.wall - time.Duration(tot.DurationMs)*time.Millisecond
		o.cleanup = time.Duration(tot.Cleanup.Ms) * time.Millisecond
	}
	return o
}

// directFrames reads the frames of one direct run until its end: the
// totals, whether the command said "ready" (then the soak counts
// shellsup's descriptors, releases the command through goFile and, for a
// cancel, sends one), and a decode error other than EOF.
func directFrames(c combo, cmd *exec.Cmd, out io.Reader, stdin io.Writer, goFile string, o *outcome) (*protocol.Totals, bool, error) {
	var tot *protocol.Totals
	var text strings.Builder
	ready := false
	dec := protocol.NewDecoder(out)
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return tot, ready, err
		}
		switch f := f.(type) {
		case *protocol.Progress:
			if f.Stream == "stdout" {
				text.WriteString(f.Text)
			}
		case *protocol.Totals:
			tot = f
		}
		if !ready && strings.Contains(text.String(), "ready") {
			ready = true
			o.fds = countFds(cmd.Process.Pid)
			_ = os.WriteFile(goFile, nil, 0o644)
			if c.ending == endCancel {
				_ = protocol.NewEncoder(stdin).Encode(&protocol.Cancel{})
			}
		}
	}
}

// checkDirect says what is wrong with a run's end, or "".
func checkDirect(c combo, exit int, tot *protocol.Totals, decErr error, readySeen bool, stderr string) string {
	switch {
	case decErr != nil:
		return "decoding frames: " + decErr.Error()
	case tot == nil:
		return fmt.Sprintf("no totals (exit %d, stderr %q)", exit, stderr)
	case len(tot.Cleanup.Stragglers) > 0:
		return fmt.Sprintf("stragglers %v", tot.Cleanup.Stragglers)
	case c.ending != endTimeout && !readySeen:
		return "the command never said ready"
	}
	want := map[string]int{endFinish: 7, endTimeout: 124, endCancel: 130}[c.ending]
	if exit != want {
		return fmt.Sprintf("exit %d, want %d (stderr %q)", exit, want, stderr)
	}
	if c.ending == endTimeout && !tot.TimedOut || c.ending == endCancel && !tot.Cancelled {
		return fmt.Sprintf("totals say timedOut %v cancelled %v", tot.TimedOut, tot.Cancelled)
	}
	return ""
}

// runParentDeath runs shellsup under a helper parent that holds its pipes, and SIGKILLs that
// parent once the command is ready. shellsup then reaches the soak (a subreaper), which reaps it.
func runParentDeath(tok reapertest.Token, args []string, goFile string) outcome {
	o := outcome{fds: -1}
	exe, err := os.Executable()
	if err != nil {
		o.failure = err.Error()
		return o
	}
	parent := exec.Command(exe, append([]string{*bin}, args...)...)
	parent.Env = append(env(tok), helperVar+"=parent")
	out, err := parent.StdoutPipe()
	if err != nil {
		o.failure = err.Error()
		return o
	}
	began := time.Now()
	if err := parent.Start(); err != nil {
		o.failure = err.Error()
		return o
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid := 0
	if _, perr := fmt.Sscanf(line, "ready %d", &pid); err != nil || perr != nil {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		o.failure = fmt.Sprintf("the helper parent did not report ready: %q %v", line, err)
		return o
	}
	o.fds = countFds(pid)
	_ = os.WriteFile(goFile, nil, 0o644)
	killed := time.Now()
	_ = parent.Process.Kill()
	_ = parent.Wait() // killed
	hwm, status, err := reapAdopted(pid, 60*time.Second)
	o.wall = time.Since(began)
	o.cleanup = time.Since(killed)
	if err != nil {
		o.failure = err.Error()
		return o
	}
	o.hwm = hwm
	if status.ExitStatus() != 130 {
		o.failure = fmt.Sprintf("shellsup exited %v after its parent died, want 130", status)
	}
	return o
}

// reapAdopted waits for pid, which becomes the soak's child once its parent is gone, sampling its
// VmHWM until then, and returns the largest sample and its status.
func reapAdopted(pid int, limit time.Duration) (int64, unix.WaitStatus, error) {
	var ws unix.WaitStatus
	var hwm int64
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		hwm = max(hwm, vmHWM(pid)) // unreaped, the pid cannot name another process
		got, err := linux.Wait4(pid, &ws, unix.WNOHANG)
		if got == pid {
			return hwm, ws, nil
		}
		if err != nil && !errors.Is(err, unix.ECHILD) {
			return hwm, ws, fmt.Errorf("waiting for shellsup %d: %w", pid, err)
		}
	}
	return hwm, ws, fmt.Errorf("shellsup %d did not exit within %v of its parent's death", pid, limit)
}

// sampleUntilExit samples the VmHWM of pid, a child of the soak, every 2 ms until it has exited
// (waitid WNOWAIT: it is left for its exec.Cmd to reap) and returns the largest sample, KiB.
func sampleUntilExit(pid int) int64 {
	var hwm int64
	for {
		hwm = max(hwm, vmHWM(pid))
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		if err != nil || info.Signo != 0 { // exited (or gone): a zombie has no VmHWM
			return hwm
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// vmHWM reads pid's peak resident set size in KiB, 0 if it has none (gone or a zombie).
func vmHWM(pid int) int64 {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func countFds(pid int) int {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
