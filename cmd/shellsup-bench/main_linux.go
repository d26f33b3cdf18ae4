// Command shellsup-bench measures shellsup against baselines run side by
// side in the same run, and prints a table of medians (make bench):
//
//   - spawn overhead: shellsup -- true vs bash -lc true
//   - drain: 1 GiB through shellsup vs through cat > /dev/null
//   - teardown: killing and reaping 500 setsid sleepers after bash exits vs
//     the kernel's own cgroup.kill of the same tree
//   - peak RSS of shellsup while 1 GiB of output passes through it
//
// Every run gets an empty HOME, so a login shell's profile does not drown
// the numbers. Linux only.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/shellsup/shellsup/protocol"
)

var (
	bin   = flag.String("bin", "bin/shellsup", "the shellsup binary")
	runs  = flag.Int("runs", 40, "repetitions of the spawn benchmark")
	heavy = flag.Int("heavy-runs", 5, "repetitions of the drain and teardown benchmarks")
	home  string
)

func main() {
	flag.Parse()
	var err error
	if home, err = os.MkdirTemp("", "shellsup-bench-home-"); err != nil {
		fatal(err)
	}
	defer os.RemoveAll(home)
	if *bin, err = filepath.Abs(*bin); err != nil {
		fatal(err)
	}
	fmt.Printf("shellsup bench: %s, medians (runs interleaved, baseline first)\n\n", *bin)
	fmt.Println("| measure | baseline | shellsup | result | target |")
	fmt.Println("|---|---|---|---|---|")
	spawnOverhead()
	drain()
	drainSpill()
	teardown()
	peakRSS()
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "shellsup-bench:", err)
	os.Exit(1)
}

func env() []string { return append(os.Environ(), "HOME="+home) }

// timeRun runs cmd to completion and returns its wall time.
func timeRun(cmd *exec.Cmd) time.Duration {
	cmd.Env = env()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fatal(fmt.Errorf("%v: %w", cmd.Args, err))
	}
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func spawnOverhead() {
	var base, sup []time.Duration
	for i := 0; i < *runs; i++ {
		base = append(base, timeRun(exec.Command("/bin/bash", "-lc", "true")))
		sup = append(sup, timeRun(exec.Command(*bin, "--", "true")))
	}
	b, s := median(base), median(sup)
	fmt.Printf("| spawn: `bash -lc true` vs `shellsup -- true` (%d runs) | %s | %s | +%s | within 6 ms |\n", *runs, ms(b), ms(s), ms(s-b))
}

func drain() {
	const gib = "1073741824"
	var base, sup []time.Duration
	for i := 0; i < *heavy; i++ {
		base = append(base, timeRun(exec.Command("/bin/bash", "-c", "head -c "+gib+" /dev/zero | cat > /dev/null")))
		cmd := exec.Command(*bin, "--frames", "--", "head -c "+gib+" /dev/zero")
		cmd.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		sup = append(sup, timeRun(cmd))
	}
	b, s := median(base), median(sup)
	fmt.Printf("| drain 1 GiB: `head | cat > /dev/null` vs `shellsup -- head` (%d runs) | %s | %s | %.2f× cat's speed | ≥ 1.0× |\n", *heavy, ms(b), ms(s), float64(b)/float64(s))
}

// drainSpill is drain with --spill: the first 256 MiB (the default
// --spill-max) written to a spill file, the rest spliced away.
func drainSpill() {
	const gib = "1073741824"
	dir, err := os.MkdirTemp("", "shellsup-bench-spill-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	var base, sup []time.Duration
	for i := 0; i < *heavy; i++ {
		base = append(base, timeRun(exec.Command("/bin/bash", "-c", "head -c "+gib+" /dev/zero | cat > /dev/null")))
		cmd := exec.Command(*bin, "--frames", "--spill", dir, "--", "head -c "+gib+" /dev/zero")
		cmd.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		sup = append(sup, timeRun(cmd))
		runs, _ := filepath.Glob(filepath.Join(dir, "shellsup-*"))
		for _, r := range runs {
			os.RemoveAll(r)
		}
	}
	b, s := median(base), median(sup)
	fmt.Printf("| drain 1 GiB with `--spill` (256 MiB kept): `head | cat > /dev/null` vs `shellsup --spill DIR -- head` (%d runs) | %s | %s | %.2f× cat's speed | ≥ 1.0× |\n", *heavy, ms(b), ms(s), float64(b)/float64(s))
}

// teardown compares shellsup's cleanup of 500 setsid sleepers (its own
// account of the time from bash's exit to ECHILD) with cgroup.kill of 500
// sleepers in a scratch cgroup, timed from the write to "populated 0". The
// second row has sleepers that ignore SIGTERM and --grace 0, so the kill
// step does the work: in the cgroup tier, cgroup.freeze + cgroup.kill.
func teardown() {
	const n = 500
	var base, sup, deaf []time.Duration
	baseNote, tier := "", ""
	for i := 0; i < *heavy; i++ {
		if d, err := cgroupKill(n); err != nil {
			baseNote = err.Error()
		} else {
			base = append(base, d)
		}
		var d time.Duration
		d, tier = shellsupCleanup(n, false)
		sup = append(sup, d)
		d, _ = shellsupCleanup(n, true)
		deaf = append(deaf, d)
	}
	s, k := median(sup), median(deaf)
	if len(base) == 0 {
		fmt.Printf("| kill+reap %d setsid sleepers: cgroup.kill vs shellsup cleanup (%s) | n/a (%s) | %s | | ≤ 1.2× cgroup.kill |\n", n, tier, baseNote, ms(s))
		fmt.Printf("| kill+reap %d TERM-ignoring sleepers, --grace 0 (%s) | n/a | %s | | ≤ 1.1× cgroup.kill |\n", n, tier, ms(k))
		return
	}
	b := median(base)
	fmt.Printf("| kill+reap %d setsid sleepers: cgroup.kill vs shellsup cleanup (%s, %d runs) | %s | %s | %.2f× | ≤ 1.2× |\n", n, tier, *heavy, ms(b), ms(s), float64(s)/float64(b))
	fmt.Printf("| kill+reap %d TERM-ignoring sleepers, --grace 0: cgroup.kill vs shellsup cleanup (%s, %d runs) | %s | %s | %.2f× | ≤ 1.1× |\n", n, tier, *heavy, ms(b), ms(k), float64(k)/float64(b))
}

// settle is how long both teardown runs let 500 freshly started sleepers
// finish starting before they are killed.
const settle = 500 * time.Millisecond

// shellsupCleanup runs n setsid sleepers under shellsup and returns its
// cleanup time and tier; deaf sleepers ignore SIGTERM and get no grace.
func shellsupCleanup(n int, deaf bool) (time.Duration, string) {
	// bash waits until every sleeper has exec'd sleep and then lets their
	// start-up (the dynamic loader) finish, so the cleanup is measured on a
	// settled tree, as the cgroup baseline is.
	script := fmt.Sprintf(`for i in $(seq %d); do setsid sleep 300 & done
for p in $(jobs -p); do c=; until [ "$c" = sleep ]; do read -r c < /proc/$p/comm; done; done
sleep %g`, n, settle.Seconds())
	args := []string{"--frames"}
	if deaf {
		script = "trap '' TERM\n" + script // ignored dispositions survive exec
		args = append(args, "--grace", "0")
	}
	cmd := exec.Command(*bin, append(args, "--", script)...)
	cmd.Env = env()
	out, err := cmd.Output()
	if err != nil {
		fatal(fmt.Errorf("shellsup teardown run: %w", err))
	}
	dec := protocol.NewDecoder(bytes.NewReader(out))
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			fatal(fmt.Errorf("no totals: %w", err))
		}
		if t, ok := f.(*protocol.Totals); ok {
			if t.Cleanup.Signalled < n {
				fatal(fmt.Errorf("cleanup signalled %d of %d sleepers", t.Cleanup.Signalled, n))
			}
			if len(t.Cleanup.Stragglers) > 0 {
				fatal(fmt.Errorf("cleanup left stragglers: %v", t.Cleanup.Stragglers))
			}
			return time.Duration(t.Cleanup.Ms) * time.Millisecond, t.Cleanup.Tier
		}
	}
}

// cgroupKill starts n sleepers directly in a fresh cgroup v2 leaf
// (CLONE_INTO_CGROUP), then times cgroup.kill until cgroup.events says
// "populated 0".
func cgroupKill(n int) (time.Duration, error) {
	root, err := cgroup2Root()
	if err != nil {
		return 0, err
	}
	dir := filepath.Join(root, fmt.Sprintf("shellsup-bench-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return 0, fmt.Errorf("creating a scratch cgroup: %w", err)
	}
	defer os.Remove(dir)
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	cmds := make([]*exec.Cmd, 0, n)
	defer func() {
		for _, c := range cmds {
			_ = c.Wait() // killed: reap
		}
	}()
	for i := 0; i < n; i++ {
		c := exec.Command("sleep", "300")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: fd}
		if err := c.Start(); err != nil {
			return 0, fmt.Errorf("starting a sleeper in the cgroup: %w", err)
		}
		cmds = append(cmds, c)
	}
	time.Sleep(settle) // as the shellsup run does
	start := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return 0, fmt.Errorf("cgroup.kill: %w", err)
	}
	for {
		ev, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if err != nil {
			return 0, err
		}
		if strings.Contains(string(ev), "populated 0") {
			return time.Since(start), nil
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// cgroup2Root finds a writable cgroup v2 mount (unified or hybrid).
func cgroup2Root() (string, error) {
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[2] == "cgroup2" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("no cgroup2 mount")
}

func peakRSS() {
	dir, err := os.MkdirTemp("", "shellsup-bench-spill-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, extra := range [][]string{nil, {"--spill", dir}} {
		var rss []int64
		for i := 0; i < 3; i++ {
			args := append(append([]string{"--frames"}, extra...), "--", "head -c 1073741824 /dev/zero")
			cmd := exec.Command(*bin, args...)
			cmd.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			timeRun(cmd)
			rss = append(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
			runs, _ := filepath.Glob(filepath.Join(dir, "shellsup-*"))
			for _, r := range runs {
				os.RemoveAll(r)
			}
		}
		sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
		what := "peak RSS of shellsup passing 1 GiB"
		if extra != nil {
			what += " with `--spill`"
		}
		fmt.Printf("| %s | | %.1f MiB | | ≤ 12 MiB |\n", what, float64(rss[1])/1024)
	}
}
