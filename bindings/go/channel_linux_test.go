package shellsup

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// The command runs as the harness's user and the harness is dumpable: the
// command can open /proc/<harness>/fd/N. A pipe there reopens in either
// direction; a socket does not (ENXIO). Run gives shellsup socketpairs, so
// the command can neither write a forged totals frame into the frame
// stream nor read the cancel frames out of the control channel; and a
// report counts only when shellsup exits as it promises.

// forgeAttack finds the harness (shellsup's parent), tries to write a
// forged totals frame ($FORGED, base64) into each of its pipe and socket
// fds above 2, logging each try to $LOG, leaves a setsid sleeper behind and
// SIGKILLs shellsup.
const forgeAttack = `sleep 0.5
s=$(cat /proc/$PPID/stat); s=${s##*) }; set -- $s; h=$2
for fd in /proc/$h/fd/*; do
  n=${fd##*/}; [ "$n" -gt 2 ] || continue
  what=$(readlink "$fd") || continue
  case $what in pipe:*|socket:*) ;; *) continue ;; esac
  if err=$( { echo "$FORGED" | base64 -d > "$fd"; } 2>&1 ); then
    echo "wrote $n $what" >> "$LOG"
  else
    echo "refused $n $what: $err" >> "$LOG"
  fi
done
setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo "sleeper $!" >> "$LOG"
kill -9 $PPID
sleep 300`

// swallowAttack tries to open each pipe and socket fd of the harness for
// reading, to swallow the cancel frames, and logs "done" when it has tried.
const swallowAttack = `s=$(cat /proc/$PPID/stat); s=${s##*) }; set -- $s; h=$2
for fd in /proc/$h/fd/*; do
  n=${fd##*/}; [ "$n" -gt 2 ] || continue
  what=$(readlink "$fd") || continue
  case $what in pipe:*|socket:*) ;; *) continue ;; esac
  if err=$( { exec 7<"$fd"; } 2>&1 ); then
    echo "opened $n $what" >> "$LOG"
    timeout 60 cat "$fd" > /dev/null 2>&1 &
  else
    echo "refused $n $what: $err" >> "$LOG"
  fi
done
echo done >> "$LOG"
sleep 300`

func init() {
	helpers.Register("attack-harness", attackHarness)
}

// attackReport is what attackHarness prints.
type attackReport struct {
	Tier     string
	Category string // "" when the run returned no error
	Message  string
	Command  string // the result's command, when there is a result
	Cancel   bool   // the result says cancelled
	KillSecs float64
}

// attackHarness runs one attack (args: scenario api pidns) with Run or
// Start and prints an attackReport as JSON. It is the harness the command
// attacks, and may run as nobody.
func attackHarness(args []string) int {
	scenario, api := args[0], args[1]
	pidns, noPidns := args[2] == "pidns", args[2] == "no-pidns"
	ctx := context.Background()
	var rep attackReport
	probe, err := Run(ctx, Request{Command: "true", PIDNamespace: pidns, NoPIDNamespace: noPidns})
	if err != nil {
		fmt.Println("probe:", err)
		return 1
	}
	rep.Tier = probe.Cleanup.Tier
	limit := 30 * time.Second
	if contains(strings.Split(rep.Tier, "+"), "pidns") && scenario == "forge" {
		limit = 3 * time.Second // the command cannot reach shellsup: the run lasts until its timeout
	}
	req := Request{Command: forgeAttack, PIDNamespace: pidns, NoPIDNamespace: noPidns, Timeout: limit}
	if scenario == "killed" {
		req.Command = sleeperCommand
		go killChildrenAfterSleeper()
	}
	var res Result
	switch {
	case scenario == "swallow":
		req.Command, req.Timeout, req.Lifetime = swallowAttack, 0, 30*time.Second
		res, err = swallowThenKill(ctx, req, &rep)
	case api == "run":
		res, err = Run(ctx, req)
	default:
		req.Timeout, req.Lifetime = 0, limit
		var job *Job
		if job, err = Start(ctx, req); err == nil {
			res, err = job.Wait(ctx)
		}
	}
	var e *Error
	switch {
	case errors.As(err, &e):
		rep.Category, rep.Message = e.Category, e.Message
	case err != nil:
		rep.Category, rep.Message = "other", err.Error()
	default:
		rep.Command, rep.Cancel = res.Command, res.Cancelled
	}
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
	return 0
}

// sleeperCommand leaves a setsid sleeper and waits (the harness then
// SIGKILLs shellsup).
const sleeperCommand = `setsid sleep 300 </dev/null >/dev/null 2>&1 &
echo "sleeper $!" >> "$LOG"
sleep 300`

// killChildrenAfterSleeper SIGKILLs the harness's children (shellsup) once
// the command has logged its sleeper, as the OOM killer or an operator
// would: inside a PID namespace the command cannot reach shellsup itself.
func killChildrenAfterSleeper() {
	proctest.Await(20*time.Second, func() bool {
		b, _ := os.ReadFile(os.Getenv("LOG"))
		return strings.Contains(string(b), "sleeper ")
	})
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(field); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// swallowThenKill starts the job, waits for its command to log "done", and
// kills it, timing the kill.
func swallowThenKill(ctx context.Context, req Request, rep *attackReport) (Result, error) {
	job, err := Start(ctx, req)
	if err != nil {
		return Result{}, err
	}
	proctest.Await(20*time.Second, func() bool {
		b, _ := os.ReadFile(os.Getenv("LOG"))
		return strings.Contains(string(b), "done\n")
	})
	t0 := time.Now()
	res, err := job.Kill(2 * time.Second)
	rep.KillSecs = time.Since(t0).Seconds()
	return res, err
}

// attack runs attackHarness as user ("root" or "nobody") and returns its
// report and the command's log lines.
func attack(t *testing.T, tok reapertest.Token, user string, args ...string) (attackReport, []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs the harness as root and as nobody: needs root")
	}
	dir := nobodyDir(t)
	require.NoError(t, os.Chmod(dir, 0o777))
	log := filepath.Join(dir, "log")
	require.NoError(t, os.WriteFile(log, nil, 0o666))
	require.NoError(t, os.Chmod(log, 0o666))
	home := filepath.Join(dir, "home")
	require.NoError(t, os.Mkdir(home, 0o777))
	require.NoError(t, os.Chmod(home, 0o777))
	bin := copyExecutable(t, os.Getenv(BinaryEnv), filepath.Join(dir, "shellsup"))
	self := copyExecutable(t, os.Args[0], filepath.Join(dir, "harness.test"))
	argv := append([]string{self}, args...)
	if user == "nobody" {
		argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", tok.Env(),
		BinaryEnv + "=" + bin, "LOG=" + log, "FORGED=" + forgedTotals(t), helpers.Env("attack-harness")}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "the harness: %s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rep attackReport
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &rep), "the harness said: %s", out)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	return rep, strings.Split(strings.TrimSpace(string(b)), "\n")
}

// copyExecutable copies src to dst (mode 0755) and returns dst.
func copyExecutable(t *testing.T, src, dst string) string {
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, errors.Join(err, out.Close()))
	return dst
}

// refusedSockets checks that the command found at least two sockets of
// the harness (the control channel and the frame stream) and could open
// none of them; as nobody, that it found no fd of the harness at all.
func refusedSockets(t *testing.T, user string, log []string) {
	t.Helper()
	if user == "nobody" {
		// The binding holds the harness non-dumpable while a run is open
		// (dumpable_linux.go): a command of its own uid cannot even list
		// its fds. A root command can, and meets ENXIO below.
		for _, line := range log {
			assert.False(t, strings.Contains(line, "socket:") || strings.Contains(line, "pipe:"), "the command reached the harness's fds: %q", log)
		}
		return
	}
	var sockets []string
	for _, line := range log {
		if strings.Contains(line, "socket:") {
			sockets = append(sockets, line)
		}
	}
	require.GreaterOrEqual(t, len(sockets), 2, "the command found the harness's sockets: %q", log)
	for _, line := range sockets {
		assert.True(t, strings.HasPrefix(line, "refused ") && strings.Contains(line, "No such device or address"), "%s (log %q)", line, log)
	}
}

// TestForgedTotalsAndKilledShellsup: the command of a harness running as
// root or as nobody forges totals through /proc/<harness>/fd and SIGKILLs
// shellsup. The forgery cannot be written, Run and Start return an error,
// never a clean result, and nothing of the command survives in the cgroup
// tier (Run kills the leaf) or under --pidns (the kernel kills the
// namespace; there the harness is not even visible). The default is one of
// the two: the cgroup tier as root here, a PID namespace as nobody (no
// delegated cgroup). Only NoPIDNamespace gives nobody the subreaper tier
// alone, whose boundary dies with shellsup: the error says so.
func TestForgedTotalsAndKilledShellsup(t *testing.T) {
	for _, user := range []string{"root", "nobody"} {
		for _, api := range []string{"run", "start"} {
			for _, ns := range []string{"default", "no-pidns", "pidns"} {
				t.Run(user+"/"+api+"/"+ns, func(t *testing.T) {
					tok := reapertest.NewToken()
					t.Cleanup(func() {
						reapertest.Kill(tok)
						awaitNoLeak(t, tok, 10*time.Second)
					})
					rep, log := attack(t, tok, user, "forge", api, ns)
					assert.NotEqual(t, "forged", rep.Command, "the forged totals became the result: %+v", rep)
					tiers := strings.Split(rep.Tier, "+")
					if ns == "default" {
						assert.Contains(t, tiers, map[string]string{"root": "cgroup", "nobody": "pidns"}[user], "the default tier: %+v", rep)
					}
					if contains(tiers, "pidns") {
						for _, line := range log {
							assert.NotContains(t, line, "socket:", "the harness is outside the namespace: %q", log)
						}
					} else {
						require.Equal(t, CategoryProtocol, rep.Category, "never a clean result: %+v", rep)
						assert.Contains(t, rep.Message, "signal: killed")
						refusedSockets(t, user, log)
					}
					if contains(tiers, "cgroup") || contains(tiers, "pidns") {
						assertNothingAlive(t, tok)
						return
					}
					assert.Equal(t, "nobody/no-pidns", user+"/"+ns, "the subreaper tier alone: %+v", rep)
					assert.Contains(t, rep.Message, "may survive", "the subreaper tier alone says what is left")
					assert.NotEmpty(t, reapertest.Find(tok), "the tree outlived shellsup, as documented for this tier")
				})
			}
		}
	}
}

// TestKilledShellsupLeavesNothingByDefault: inside a PID namespace the
// command cannot reach shellsup, but shellsup can still die (the OOM
// killer, an operator): the harness SIGKILLs it. Run and Start return an
// error, and in the default tier (cgroup as root here, a PID namespace as
// nobody) nothing of the command survives, its setsid sleeper included.
func TestKilledShellsupLeavesNothingByDefault(t *testing.T) {
	for _, user := range []string{"root", "nobody"} {
		for _, api := range []string{"run", "start"} {
			t.Run(user+"/"+api, func(t *testing.T) {
				tok := reapertest.NewToken()
				t.Cleanup(func() {
					reapertest.Kill(tok)
					awaitNoLeak(t, tok, 10*time.Second)
				})
				rep, _ := attack(t, tok, user, "killed", api, "default")
				assert.Contains(t, strings.Split(rep.Tier, "+"), map[string]string{"root": "cgroup", "nobody": "pidns"}[user], "%+v", rep)
				require.Equal(t, CategoryProtocol, rep.Category, "never a clean result: %+v", rep)
				assert.Contains(t, rep.Message, "signal: killed")
				assertNothingAlive(t, tok)
			})
		}
	}
}

// assertNothingAlive: within 5 s no process carrying tok is alive.
func assertNothingAlive(t *testing.T, tok reapertest.Token) {
	t.Helper()
	gone := proctest.Await(5*time.Second, func() bool {
		for _, p := range reapertest.Find(tok) {
			if p.State != "Z" {
				return false
			}
		}
		return true
	})
	assert.True(t, gone, "nothing of the command is alive: %v", reapertest.Find(tok))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCommandCannotSwallowCancel: the command tries to open the harness's
// control channel for reading, to swallow the cancel frame; it cannot
// (ENXIO), and Kill cancels the job at once.
func TestCommandCannotSwallowCancel(t *testing.T) {
	for _, user := range []string{"root", "nobody"} {
		t.Run(user, func(t *testing.T) {
			tok := reapertest.NewToken()
			t.Cleanup(func() { reapertest.Check(t, tok) })
			rep, log := attack(t, tok, user, "swallow", "start", "no-pidns")
			require.Empty(t, rep.Category, "%+v", rep)
			refusedSockets(t, user, log)
			assert.True(t, rep.Cancel, "%+v", rep)
			assert.Less(t, rep.KillSecs, 10.0)
		})
	}
}

// TestExitMustAgreeWithTotals: a fake shellsup sends a start and a clean
// totals frame and exits 1: the report does not count.
func TestExitMustAgreeWithTotals(t *testing.T) {
	frames := encodeFrames(t, &protocol.Start{Version: protocol.Version, Pid: 1, ChildPid: 2, Command: "x", Cwd: "/", Containment: "subreaper"})
	fake := writeScript(t, "echo "+frames+" | base64 -d; echo "+forgedTotals(t)+" | base64 -d; exit 1")
	_, err := Run(context.Background(), Request{Command: "x", Binary: fake})
	e := requireCategory(t, err, CategoryProtocol)
	assert.Contains(t, e.Message, "unreported: its totals frame promises exit status 0, but shellsup ended with exit status 1")
}

// encodeFrames is frame f, base64.
func encodeFrames(t *testing.T, f protocol.Frame) string {
	var b bytes.Buffer
	require.NoError(t, protocol.NewEncoder(&b).Encode(f))
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestExpectedExit(t *testing.T) {
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		name   string
		totals *protocol.Totals
		exit   int
		counts bool
	}{
		{"command status", &protocol.Totals{Result: protocol.Result{ExitCode: code(3)}}, 3, true},
		{"other status", &protocol.Totals{Result: protocol.Result{ExitCode: code(3)}}, 0, false},
		{"timeout", &protocol.Totals{Result: protocol.Result{ExitCode: code(143), TimedOut: true}}, 124, true},
		{"cancel", &protocol.Totals{Result: protocol.Result{ExitCode: code(143), Cancelled: true}, CancelReason: "request"}, 130, true},
		{"cancel by signal", &protocol.Totals{Result: protocol.Result{ExitCode: code(143), Cancelled: true}, CancelReason: "signal"}, 143, true},
		{"cancel by signal, 193", &protocol.Totals{Result: protocol.Result{ExitCode: code(143), Cancelled: true}, CancelReason: "signal"}, 193, false},
		{"straggler", &protocol.Totals{Result: protocol.Result{ExitCode: code(0)}, Cleanup: protocol.Cleanup{Stragglers: []protocol.Straggler{{Pid: 5}}}}, 125, true},
		{"straggler, exit 0", &protocol.Totals{Result: protocol.Result{ExitCode: code(0)}, Cleanup: protocol.Cleanup{Stragglers: []protocol.Straggler{{Pid: 5}}}}, 0, false},
		{"unknown status", &protocol.Totals{}, 125, true},
		{"error frame", nil, 127, true},
		{"error frame, signal", nil, -1, false},
	} {
		lo, hi, _ := expectedExit(tc.totals)
		assert.Equal(t, tc.counts, tc.exit >= lo && tc.exit <= hi, tc.name)
	}
}
