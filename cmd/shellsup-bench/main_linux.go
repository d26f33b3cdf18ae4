// Command shellsup-bench measures shellsup against its limits, each baseline run side by side
// with shellsup in the same run (runs interleaved, baseline first), and prints a Markdown table
// with the target and ✔ or ✘ per row (make bench):
//
//   - spawn overhead: shellsup -- true vs bash -lc true, per tier (default, --no-cgroup,
//     --pidns); the Go binding's Run vs the same; the
//     Python binding's shell.run (bindings/python/bench_overhead.py) vs subprocess.run;
//   - drain: 1 GiB through shellsup vs through cat > /dev/null, in wall time and in CPU time
//     (shellsup's own, read from /proc while it is a zombie, so its children are not counted);
//   - human mode: 1 GiB forwarded to a pipe, against timeout(1) forwarding the same;
//   - progress latency: from bash writing a line (stamped with $EPOCHREALTIME) to its frame
//     reaching this process;
//   - peak RSS: shellsup's own VmHWM while 1 GiB passes through it;
//   - teardown of 500 and of 2000 setsid sleepers: shellsup's cleanup (its own account, from the
//     trigger to the last reap) vs the kernel's cgroup.kill of the same number of sleepers in a
//     scratch cgroup v2, timed from the write to "populated 0". A row per containment tier (the
//     default run, whose top tier is cgroup where it can make a leaf, and a --no-cgroup run for
//     the subreaper tier); a tier the binary did not use is n/a.
//
// Every run gets an empty HOME, so a login shell's profile does not drown the numbers. Linux only.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	shellsup "github.com/shellsup/shellsup/bindings/go"
	"github.com/shellsup/shellsup/internal/procstat"
	"github.com/shellsup/shellsup/protocol"
)

var (
	bin    = flag.String("bin", "bin/shellsup", "the shellsup binary")
	runs   = flag.Int("runs", 40, "repetitions of the spawn benchmarks")
	heavy  = flag.Int("heavy-runs", 5, "repetitions of the drain and 500-sleeper teardown benchmarks")
	python = flag.String("python", "", "a Python with msgpack for bindings/python/bench_overhead.py (none: that row is n/a)")
	only   = flag.String("only", "", "comma-separated groups to run, of spawn, sandbox, go, python, drain, spill, tidy, human, latency, pty, teardown (empty: all)")
	home   string
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
	fmt.Printf("shellsup bench: %s, medians unless stated (runs interleaved, baseline first)\n", *bin)
	fmt.Printf("machine: %d cores, kernel %s\n\n", runtime.NumCPU(), kernel())
	fmt.Println("| measure | baseline | shellsup | result | target | met |")
	fmt.Println("|---|---|---|---|---|---|")
	groups := []struct {
		name string
		run  func()
	}{
		{"spawn", spawnOverhead},
		{"sandbox", sandboxOverhead},
		{"go", goBindingOverhead},
		{"python", pythonOverhead},
		{"drain", drain},
		{"spill", spill},
		{"tidy", tidyDrain},
		{"human", humanForward},
		{"latency", progressLatency},
		{"pty", ptyOverhead},
		{"teardown", func() { teardown(500, *heavy); teardown(2000, max(2, *heavy/2)) }},
	}
	for _, g := range groups {
		if selected(g.name) {
			g.run()
		}
	}
}

// selected reports whether --only asks for the group name (or is empty).
func selected(name string) bool {
	if *only == "" {
		return true
	}
	for _, n := range strings.Split(*only, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "shellsup-bench:", err)
	os.Exit(1)
}

// row prints one table row; ok is nil for a row that could not be measured.
func row(measure, baseline, sup, result, target string, ok *bool) {
	mark := "n/a"
	if ok != nil {
		mark = map[bool]string{true: "✔", false: "✘"}[*ok]
	}
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", esc(measure), esc(baseline), esc(sup), esc(result), esc(target), mark)
}

func ptr(b bool) *bool { return &b }

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

func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

func percentile(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// spawnTiers are the spawn rows: the tier's flags and the product's target for its overhead.
var spawnTiers = []struct {
	name  string
	args  []string
	limit time.Duration
}{
	{"default tier", nil, 2 * time.Millisecond},
	{"`--no-cgroup`", []string{"--no-cgroup"}, 1500 * time.Microsecond},
	{"`--pidns`", []string{"--pidns"}, 4 * time.Millisecond},
}

// spawnOverhead times `shellsup [tier flags] -- true` per tier against bash -lc true, all
// interleaved in one loop so every row shares one baseline.
func spawnOverhead() {
	base := []time.Duration{}
	sup := make([][]time.Duration, len(spawnTiers))
	for i := 0; i < *runs; i++ {
		base = append(base, timeRun(exec.Command("/bin/bash", "-lc", "true")))
		for j, t := range spawnTiers {
			sup[j] = append(sup[j], timeRun(exec.Command(*bin, append(append([]string{}, t.args...), "--", "true")...)))
		}
	}
	b := median(base)
	for j, t := range spawnTiers {
		s := median(sup[j])
		row(fmt.Sprintf("spawn, %s: `bash -lc true` vs `shellsup -- true` (%d runs)", t.name, *runs), ms(b), ms(s), "+"+ms(s-b),
			"≤ +"+ms(t.limit), ptr(s-b <= t.limit))
	}
}

// goBindingOverhead times shellsup.Run(ctx, {Command: "true"}) against bash -lc true.
func goBindingOverhead() {
	var base, sup []time.Duration
	req := shellsup.Request{Command: "true", Binary: *bin, Env: env()}
	for i := 0; i < *runs; i++ {
		base = append(base, timeRun(exec.Command("/bin/bash", "-lc", "true")))
		start := time.Now()
		if _, err := shellsup.Run(context.Background(), req); err != nil {
			fatal(fmt.Errorf("the Go binding's Run: %w", err))
		}
		sup = append(sup, time.Since(start))
	}
	b, s := median(base), median(sup)
	row(fmt.Sprintf("Go binding: `bash -lc true` vs `shellsup.Run(ctx, Request{Command: \"true\"})` (%d runs)", *runs), ms(b), ms(s), "+"+ms(s-b), "≤ +2.5 ms", ptr(s-b <= 2500*time.Microsecond))
}

var medianLine = regexp.MustCompile(`^(bash|run)\s+([0-9.]+)`)

// pythonOverhead runs bindings/python/bench_overhead.py and takes its medians.
func pythonOverhead() {
	const what = "Python binding: `subprocess.run([\"bash\",\"-lc\",\"true\"])` vs `shell.run(\"true\", progress=None)`"
	if *python == "" {
		row(what, "", "", "no --python given", "≤ +2.5 ms", nil)
		return
	}
	cmd := exec.Command(*python, "bindings/python/bench_overhead.py", "--runs", "30")
	cmd.Env = append(env(), "SHELLSUP_BIN="+*bin)
	out, err := cmd.Output()
	if err != nil {
		row(what, "", "", "bench_overhead.py failed: "+err.Error(), "≤ +2.5 ms", nil)
		return
	}
	med := map[string]float64{}
	for _, l := range strings.Split(string(out), "\n") {
		if m := medianLine.FindStringSubmatch(l); m != nil {
			med[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
	}
	if med["bash"] == 0 || med["run"] == 0 {
		row(what, "", "", "no medians in bench_overhead.py's output", "≤ +2.5 ms", nil)
		return
	}
	d := med["run"] - med["bash"]
	row(what+" (30 runs)", fmt.Sprintf("%.2f ms", med["bash"]), fmt.Sprintf("%.2f ms", med["run"]), fmt.Sprintf("%+.2f ms", d), "≤ +2.5 ms", ptr(d <= 2.5))
}

const gib = 1 << 30

// catDrain runs head -c 1 GiB /dev/zero | cat > /dev/null from here and returns the wall time
// and cat's CPU time.
func catDrain() (time.Duration, time.Duration) {
	head := exec.Command("head", "-c", strconv.Itoa(gib), "/dev/zero")
	cat := exec.Command("cat")
	pr, pw, err := os.Pipe()
	if err != nil {
		fatal(err)
	}
	head.Stdout, cat.Stdin = pw, pr
	cat.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	start := time.Now()
	if err := head.Start(); err != nil {
		fatal(err)
	}
	if err := cat.Start(); err != nil {
		fatal(err)
	}
	pw.Close()
	pr.Close()
	if err := head.Wait(); err != nil {
		fatal(fmt.Errorf("head: %w", err))
	}
	if err := cat.Wait(); err != nil {
		fatal(fmt.Errorf("cat: %w", err))
	}
	return time.Since(start), cat.ProcessState.UserTime() + cat.ProcessState.SystemTime()
}

// ownUsage is what a shellsup run used itself, its children not counted.
type ownUsage struct {
	wall, cpu time.Duration
	hwm       int64 // peak RSS, KiB (VmHWM)
}

// supRun runs shellsup with args, frames to /dev/null, sampling its VmHWM while it runs, and reads
// its own CPU time from /proc/PID/stat while it is a zombie (waitid WNOWAIT), before reaping it.
func supRun(args ...string) ownUsage {
	cmd := exec.Command(*bin, args...)
	cmd.Env = env()
	cmd.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	var u ownUsage
	exited := make(chan struct{})
	go func() {
		var info unix.Siginfo
		_ = unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) // exited, not reaped
		close(exited)
	}()
	for sampling := true; sampling; {
		u.hwm = max(u.hwm, vmHWM(cmd.Process.Pid))
		select {
		case <-exited:
			sampling = false
		case <-time.After(5 * time.Millisecond):
		}
	}
	u.wall = time.Since(start)
	u.cpu = ownCPU(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		fatal(fmt.Errorf("%v: %w", cmd.Args, err))
	}
	return u
}

// vmHWM reads pid's peak resident set size in KiB, 0 if it is gone.
func vmHWM(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/PID/stat; 100 on Linux.
const clockTick = 100

// ownCPU reads utime+stime (fields 14 and 15) of pid, its children not included.
func ownCPU(pid int) time.Duration {
	st, err := procstat.Read("/proc", pid)
	if err != nil {
		fatal(fmt.Errorf("reading shellsup's CPU time: %w", err))
	}
	return time.Duration(st.UTime+st.STime) * time.Second / clockTick
}

func drain() {
	var base, baseCPU, sup, supCPU []time.Duration
	var hwm []int64
	for i := 0; i < *heavy; i++ {
		w, c := catDrain()
		base, baseCPU = append(base, w), append(baseCPU, c)
		u := supRun("--frames", "--", "head -c "+strconv.Itoa(gib)+" /dev/zero")
		sup, supCPU, hwm = append(sup, u.wall), append(supCPU, u.cpu), append(hwm, u.hwm)
	}
	b, s := median(base), median(sup)
	row(fmt.Sprintf("drain 1 GiB, wall: `head | cat > /dev/null` vs `shellsup --frames -- head` (%d runs)", *heavy),
		ms(b), ms(s), fmt.Sprintf("%.2f× cat's speed", float64(b)/float64(s)), "≥ 1.0×", ptr(s <= b))
	bc, sc := median(baseCPU), median(supCPU)
	row("drain 1 GiB, CPU time (user+sys): cat vs shellsup itself", ms(bc), ms(sc), fmt.Sprintf("%.2f× cat's", float64(sc)/float64(bc)), "≤ 1.0×", ptr(sc <= bc))
	sort.Slice(hwm, func(i, j int) bool { return hwm[i] < hwm[j] })
	h := hwm[len(hwm)/2]
	row("peak RSS of shellsup itself (VmHWM) passing 1 GiB", "", fmt.Sprintf("%.2f MiB", float64(h)/1024), "", "≤ 8 MiB", ptr(h <= 8*1024))
}

// hasOption reports whether the binary's --help lists option.
func hasOption(option string) bool {
	help, _ := exec.Command(*bin, "--help").CombinedOutput()
	return strings.Contains(string(help), option)
}

// spill measures the drain with --spill, where the binary has it.
func spill() {
	if !hasOption("--spill") {
		row("drain 1 GiB with `--spill`", "", "", "this binary has no --spill", "≥ 0.9×, CPU ≤ 1.5×", nil)
		return
	}
	dir, err := os.MkdirTemp("", "shellsup-bench-spill-") // 0700
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	var base, sup, cpuCat, cpuSup []time.Duration
	var rss int64
	for i := 0; i < *heavy; i++ {
		w, c := catDrain()
		base, cpuCat = append(base, w), append(cpuCat, c)
		u := supRun("--frames", "--spill", dir, "--", "head -c "+strconv.Itoa(gib)+" /dev/zero")
		sup, cpuSup = append(sup, u.wall), append(cpuSup, u.cpu)
		rss = max(rss, u.hwm)
		runs, _ := filepath.Glob(filepath.Join(dir, "shellsup-*"))
		for _, r := range runs {
			os.RemoveAll(r) // 256 MiB each
		}
	}
	b, s := median(base), median(sup)
	row(fmt.Sprintf("drain 1 GiB with `--spill` (256 MiB kept), wall (%d runs)", *heavy), ms(b), ms(s), fmt.Sprintf("%.2f× cat's speed", float64(b)/float64(s)), "≥ 0.9×", ptr(float64(b)/float64(s) >= 0.9))
	cb, cs := median(cpuCat), median(cpuSup)
	row("drain 1 GiB with `--spill`, CPU time: cat vs shellsup itself", ms(cb), ms(cs), fmt.Sprintf("%.2f× cat's", float64(cs)/float64(cb)), "≤ 1.5×", ptr(float64(cs) <= 1.5*float64(cb)))
	row("peak RSS of shellsup itself (VmHWM) passing 1 GiB with `--spill`", "", fmt.Sprintf("%.2f MiB", float64(rss)/1024), "", "≤ 8 MiB", ptr(rss <= 8<<10))
}

// progressLatency has bash print lines stamped with $EPOCHREALTIME (a builtin: no fork between
// the stamp and the write), 5 ms apart, and measures when each reaches this process as a frame.
func progressLatency() {
	const lines = 400
	cmd := exec.Command(*bin, "--frames", "--", fmt.Sprintf(`for i in $(seq %d); do echo "t $EPOCHREALTIME"; sleep 0.005; done`, lines))
	cmd.Env = append(env(), "LC_ALL=C")
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	var lat []time.Duration
	var partial string
	dec := protocol.NewDecoder(bufio.NewReader(out))
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			if err != io.EOF {
				fatal(fmt.Errorf("progress latency frames: %w", err))
			}
			break
		}
		p, ok := f.(*protocol.Progress)
		if !ok || p.Stream != "stdout" {
			continue
		}
		now := time.Now()
		text := partial + p.Text
		parts := strings.Split(text, "\n")
		partial = parts[len(parts)-1]
		for _, l := range parts[:len(parts)-1] {
			var sec, usec int64
			if _, err := fmt.Sscanf(l, "t %d.%d", &sec, &usec); err == nil {
				lat = append(lat, now.Sub(time.Unix(sec, usec*1000)))
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		fatal(fmt.Errorf("progress latency run: %w", err))
	}
	if len(lat) < lines/2 {
		fatal(fmt.Errorf("progress latency: only %d of %d stamped lines arrived", len(lat), lines))
	}
	m := median(lat)
	row(fmt.Sprintf("progress latency: bash's write to the frame here (%d lines, median / p99)", len(lat)), "", ms(m)+" / "+ms(percentile(lat, 99)), "", "median ≤ 2 ms", ptr(m <= 2*time.Millisecond))
}

// teardown compares shellsup's cleanup of n setsid sleepers (its own account of the time from
// bash's exit to the last reap) with cgroup.kill of n sleepers in a scratch cgroup, timed from the
// write to "populated 0". Each tier gets a row; the binary reports the tier it used.
func teardown(n, reps int) {
	var base, reaped []time.Duration
	sup := map[string][]time.Duration{}
	baseNote := ""
	for i := 0; i < reps; i++ {
		if d, r, err := cgroupKill(n); err != nil {
			baseNote = err.Error()
		} else {
			base, reaped = append(base, d), append(reaped, r)
		}
		for _, args := range [][]string{nil, {"--no-cgroup"}} {
			if tier, d, ok := shellsupCleanup(n, args...); ok {
				sup[tier] = append(sup[tier], d)
			}
		}
	}
	for _, tier := range []string{"cgroup", "subreaper"} {
		what := fmt.Sprintf("kill+reap %d setsid sleepers, %s tier: cgroup.kill → populated 0 vs shellsup cleanup", n, tier)
		ds := sup[tier]
		switch {
		case len(ds) == 0:
			row(what, "", "", "the binary did not use this tier", "≤ 1.1×", nil)
		case len(base) == 0:
			row(what, "n/a ("+baseNote+")", ms(median(ds)), "", "≤ 1.1×", nil)
		default:
			b, s := median(base), median(ds)
			ratio := float64(s) / float64(b)
			row(fmt.Sprintf("%s (%d runs; cgroup.kill until all reaped: %s)", what, reps, ms(median(reaped))), ms(b), ms(s), fmt.Sprintf("%.2f×", ratio), "≤ 1.1×", ptr(ratio <= 1.1))
		}
	}
}

// settle is how long both teardown runs let freshly started sleepers finish starting before
// they are killed.
const settle = 500 * time.Millisecond

// shellsupCleanup runs n setsid sleepers under shellsup with args and returns the top tier it
// used ("cgroup" of "cgroup+subreaper") and its cleanup time; not ok where the binary refused
// args (an older one without --no-cgroup).
func shellsupCleanup(n int, args ...string) (tier string, d time.Duration, ok bool) {
	// bash lets every sleeper finish starting (exec and the dynamic loader: a fork that returned
	// has not exec'd yet, unlike the baseline's Start, hence the extra 250 µs a sleeper), so the
	// cleanup is measured on a settled tree, as the cgroup baseline is. Nothing looks at a
	// sleeper's /proc entry, as nothing does in the baseline: the kernel flushes the /proc
	// dentries of each process looked at when it is reaped, a cost the baseline would not pay.
	script := fmt.Sprintf(`for i in $(seq %d); do setsid sleep 300 & done
sleep %g`, n, (settle + time.Duration(n)*250*time.Microsecond).Seconds())
	if len(args) > 0 && !hasOption(args[0]) {
		return "", 0, false
	}
	cmd := exec.Command(*bin, append(append([]string{"--frames"}, args...), "--", script)...)
	cmd.Env = env()
	out, err := cmd.Output()
	if err != nil {
		fatal(fmt.Errorf("shellsup teardown run %v: %w", args, err))
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
			top, _, _ := strings.Cut(t.Cleanup.Tier, "+")
			return top, time.Duration(t.Cleanup.Ms) * time.Millisecond, true
		}
	}
}

// cgroupKill starts n sleepers directly in a fresh cgroup v2 leaf (CLONE_INTO_CGROUP), then
// times cgroup.kill until cgroup.events says "populated 0", and on until this process has reaped
// every sleeper (which "populated 0" does not wait for, and shellsup's cleanup does).
func cgroupKill(n int) (populated, reaped time.Duration, err error) {
	root, err := cgroup2Root()
	if err != nil {
		return 0, 0, err
	}
	dir := filepath.Join(root, fmt.Sprintf("shellsup-bench-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return 0, 0, fmt.Errorf("creating a scratch cgroup: %w", err)
	}
	defer os.Remove(dir)
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	defer syscall.Close(fd)
	cmds := make([]*exec.Cmd, 0, n)
	defer func() {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) // on an early return too
		for _, c := range cmds {
			_ = c.Wait() // killed: reap
		}
	}()
	for i := 0; i < n; i++ {
		c := exec.Command("sleep", "300")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: fd}
		if err := c.Start(); err != nil {
			return 0, 0, fmt.Errorf("starting a sleeper in the cgroup: %w", err)
		}
		cmds = append(cmds, c)
	}
	time.Sleep(settle) // as the shellsup run does
	start := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		return 0, 0, fmt.Errorf("cgroup.kill: %w", err)
	}
	for {
		ev, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if err != nil {
			return 0, 0, err
		}
		if strings.Contains(string(ev), "populated 0") {
			populated = time.Since(start)
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	for _, c := range cmds {
		_ = c.Wait() // killed
	}
	reaped = time.Since(start)
	cmds = nil
	return populated, reaped, nil
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

// kernel is the running kernel's release (uname -r).
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// humanForward times human mode forwarding 1 GiB to a pipe (read by cat > /dev/null) against
// timeout(1) doing the same: `timeout 60 bash -lc 'head -c 1G /dev/zero' | cat > /dev/null`.
func humanForward() {
	gen := "head -c " + strconv.Itoa(gib) + " /dev/zero"
	var base, sup []time.Duration
	for i := 0; i < *heavy; i++ {
		base = append(base, pipeToCat(exec.Command("timeout", "60", "/bin/bash", "-lc", gen)))
		sup = append(sup, pipeToCat(exec.Command(*bin, "--quiet", "--", gen)))
	}
	b, s := median(base), median(sup)
	row(fmt.Sprintf("human mode, 1 GiB to a pipe: `timeout 60 bash -lc head` vs `shellsup --quiet -- head`, both `| cat > /dev/null` (%d runs)", *heavy),
		ms(b), ms(s), fmt.Sprintf("%.2f× timeout's speed", float64(b)/float64(s)), "≥ 1.0× timeout(1)'s", ptr(s <= b))
}

// pipeToCat runs cmd with its stdout piped into cat > /dev/null and returns the wall time until
// both ended.
func pipeToCat(cmd *exec.Cmd) time.Duration {
	cat := exec.Command("cat")
	pr, pw, err := os.Pipe()
	if err != nil {
		fatal(err)
	}
	cmd.Env, cmd.Stdout, cat.Stdin = env(), pw, pr
	cat.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	start := time.Now()
	if err := cat.Start(); err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	pw.Close()
	pr.Close()
	if err := cmd.Wait(); err != nil {
		fatal(fmt.Errorf("%v: %w", cmd.Args, err))
	}
	if err := cat.Wait(); err != nil {
		fatal(fmt.Errorf("cat: %w", err))
	}
	return time.Since(start)
}
