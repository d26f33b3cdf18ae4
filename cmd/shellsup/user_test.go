//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// needUserNobody skips unless shellsup may run commands as nobody here.
func needUserNobody(t *testing.T) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("--user needs shellsup to run as root")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("this host has no user nobody")
	}
	return u
}

// userTiers are the tiers every --user guarantee is checked in.
func userTiers() map[string][]string {
	return map[string][]string{"default": nil, "no-cgroup": {"--no-cgroup"}, "pidns": {"--pidns"}}
}

func TestUserIdentity(t *testing.T) {
	pw := needUserNobody(t)
	groups, err := pw.GroupIds()
	require.NoError(t, err)
	for name, tier := range userTiers() {
		t.Run(name, func(t *testing.T) {
			r := runShellsup(t, opts{
				args:    append([]string{"--user", "nobody", "--cwd", "/"}, tier...),
				command: `id -u; id -g; id -G; echo "$HOME $USER $LOGNAME"; grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status`,
			})
			tot := requireTotals(t, r)
			lines := strings.Split(strings.TrimSpace(tot.Stdout), "\n")
			require.Len(t, lines, 9, "%q %q", tot.Stdout, tot.Stderr)
			assert.Equal(t, pw.Uid, lines[0])
			assert.Equal(t, pw.Gid, lines[1])
			assert.ElementsMatch(t, groups, strings.Fields(lines[2]), "initgroups: the primary group and each group listing nobody, none of root's")
			home := pw.HomeDir
			if home == "" {
				home = "/nonexistent"
			}
			assert.Equal(t, home+" nobody nobody", lines[3])
			for _, l := range lines[4:8] {
				assert.Regexp(t, `^Cap(Inh|Prm|Eff|Amb):\s+0+$`, l)
			}
			assert.Regexp(t, `^NoNewPrivs:\s+1$`, lines[8])
			for _, u := range []*protocol.RunAs{r.start.User, tot.User} {
				require.NotNil(t, u)
				assert.Equal(t, "nobody", u.Name)
				assert.Equal(t, pw.Uid, strconv.Itoa(int(u.Uid)))
				assert.Equal(t, pw.Gid, strconv.Itoa(int(u.Gid)))
				assert.Equal(t, home, u.Home)
			}
		})
	}
}

func TestUserExplicitGroup(t *testing.T) {
	needUserNobody(t)
	r := runShellsup(t, opts{args: []string{"--user", "nobody:0", "--cwd", "/"}, command: "id -g; id -G; grep '^Groups:' /proc/self/status"})
	tot := requireTotals(t, r)
	assert.Regexp(t, `^0\n0\nGroups:\s*\n$`, tot.Stdout, "only the group given: no supplementary group at all")
	assert.Empty(t, r.start.User.Groups)
	assert.Equal(t, "root", r.start.User.Group)
}

// TestUserCannotReachSupervisor: as nobody, the command cannot read the
// harness's environment, open shellsup's fds, signal it or lower its fd
// limit, and its setsid sleeper is gone when the run returns (the leak
// check fails the test otherwise).
func TestUserCannotReachSupervisor(t *testing.T) {
	needUserNobody(t)
	harness := os.Getpid() // this test binary runs shellsup
	script := fmt.Sprintf(`setsid sleep 300 </dev/null >/dev/null 2>&1 &
gp=$(awk '{print $4}' /proc/$PPID/stat)
try() { if "$@" >/dev/null 2>&1; then echo "$1 ${*: -1}: allowed"; else echo "$1: refused"; fi; }
try cat /proc/%d/environ
try cat /proc/$gp/environ
try ls /proc/$PPID/fd
try ls /proc/%d/fd
try kill -0 $PPID
try kill -0 %d
try prlimit --pid $PPID --nofile=3:3
try prlimit --pid %d --nofile=3:3
try cat /proc/$PPID/environ
`, harness, harness, harness, harness)
	for name, tier := range userTiers() {
		t.Run(name, func(t *testing.T) {
			r := runShellsup(t, opts{args: append([]string{"--user", "nobody", "--cwd", "/"}, tier...), command: script})
			tot := requireTotals(t, r)
			lines := strings.Split(strings.TrimSpace(tot.Stdout), "\n")
			require.Len(t, lines, 9, "%q %q", tot.Stdout, tot.Stderr)
			for _, l := range lines {
				assert.Regexp(t, `: refused$`, l)
			}
			assert.Equal(t, 0, *tot.ExitCode)
		})
	}
	t.Run("control: without --user", func(t *testing.T) {
		skipInPidnsTier(t)
		// Not prlimit: a same-uid command could leave shellsup's cleanup
		// without fds, a finding of its own.
		var kept []string
		for _, l := range strings.Split(script, "\n") {
			if !strings.Contains(l, "prlimit") {
				kept = append(kept, l)
			}
		}
		r := runShellsup(t, opts{args: []string{"--cwd", "/"}, command: strings.Join(kept, "\n")})
		tot := requireTotals(t, r)
		assert.Contains(t, tot.Stdout, fmt.Sprintf("cat /proc/%d/environ: allowed", harness), "the same uid reads the harness's environment: the check can fail")
		assert.Regexp(t, `(?m)^kill [0-9]+: allowed$`, tot.Stdout, "and signals shellsup")
	})
}

// TestUserCannotRaiseMaxProcs: with --max-procs 20 and --user nobody, the
// command cannot write max into its leaf's pids.max (v2, or the v1 pids
// leaf on a hybrid host), leave the leaf, or make a cgroup of its own, and
// at most 20 of its processes are ever alive while it tries to fork 40.
func TestUserCannotRaiseMaxProcs(t *testing.T) {
	needUserNobody(t)
	needCgroupTier(t)
	for name, tier := range map[string][]string{"default": nil, "pidns": {"--pidns"}} {
		t.Run(name, func(t *testing.T) {
			tamper := limitCheck("pids.max", "pids", "pids.max", "20") + `f=$v2; [ -r "$f" ] || f=$v1
stat -c 'owner %u mode %a' "$f"
echo max > "$f" 2>/dev/null && echo "wrote max"
echo $$ > "${f%/*}/../cgroup.procs" 2>/dev/null && echo "left the leaf"
mkdir "${f%/*}/mine" 2>/dev/null && echo "made a cgroup"
echo "limit $(cat "$f")"
[ "$(cat "$f")" = 20 ] || exit 98
`
			// At most 40 forks, each child sleeping until the cleanup kills it.
			forker := `/usr/bin/python3 -c '
import os, time
n = 0
for i in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print("forked", n, flush=True)
'
echo "current $(cat "${f%/*}/pids.current")"`
			var mu sync.Mutex
			peak := 0
			stop, sampled := make(chan struct{}), make(chan struct{})
			r := runShellsup(t, opts{
				args:    append([]string{"--user", "nobody", "--cwd", "/", "--max-procs", "20", "--timeout", "30", "--grace", "0"}, tier...),
				command: tamper + forker,
				onFrame: func(r *running, f protocol.Frame) {
					if s, ok := f.(*protocol.Start); ok {
						go func() {
							defer close(sampled)
							for {
								n := countProcs(s.ChildPid)
								mu.Lock()
								peak = max(peak, n)
								mu.Unlock()
								select {
								case <-stop:
									return
								case <-time.After(2 * time.Millisecond):
								}
							}
						}()
					}
				},
			})
			close(stop)
			<-sampled
			tot := requireTotals(t, r)
			require.NotEqual(t, 99, r.exit, "the limit was not in force: %s", tot.Stdout)
			assert.NotEqual(t, 98, r.exit, "the command changed its limit: %s", tot.Stdout)
			assert.Contains(t, tot.Stdout, "owner 0 mode 644\n", "the leaf's limit file is shellsup's (root's), not the user's")
			assert.NotContains(t, tot.Stdout, "wrote max")
			assert.NotContains(t, tot.Stdout, "left the leaf")
			assert.NotContains(t, tot.Stdout, "made a cgroup")
			assert.Contains(t, tot.Stdout, "limit 20\n")
			var forked, current int
			for _, l := range strings.Split(tot.Stdout, "\n") {
				fmt.Sscanf(l, "forked %d", &forked)
				fmt.Sscanf(l, "current %d", &current)
			}
			assert.Positive(t, forked)
			assert.Less(t, forked, 40, "the limit refused forks")
			assert.LessOrEqual(t, current, 20)
			mu.Lock()
			defer mu.Unlock()
			assert.LessOrEqual(t, peak, 20, "never more than pids.max processes of the command")
			assert.Positive(t, tot.Cleanup.PidsLimitHit, "pids.events max counts refused forks")
			t.Logf("forked %d of 40; pids.current %d; peak %d; pidsLimitHit %d", forked, current, peak, tot.Cleanup.PidsLimitHit)
		})
	}
}

// TestUserRefusedUnprivileged: shellsup as nobody cannot run a command as
// root (or anyone): containment_unavailable, exit 125, nothing spawned.
func TestUserRefusedUnprivileged(t *testing.T) {
	bin, dir := unprivileged(t)
	for _, spec := range []string{"root", "nobody"} {
		marker := filepath.Join(dir, "spawned-"+spec)
		out, code := asNobody(t, bin, dir, "--frames", "--user", spec, "--", "touch "+marker)
		assert.Equal(t, 125, code, out)
		assert.Contains(t, out, protocol.CategoryContainmentUnavailable)
		assert.Contains(t, out, "--user "+spec+": shellsup must run as root or with CAP_SETUID, CAP_SETGID and CAP_KILL")
		assert.NoFileExists(t, marker, "refused: nothing spawned")
	}
}

func TestUserValidated(t *testing.T) {
	for _, c := range []struct{ spec, msg string }{
		{"no-such-user-xyz", `user "no-such-user-xyz": no user "no-such-user-xyz" in /etc/passwd`},
		{"nobody:no-such-group-xyz", `user "nobody:no-such-group-xyz": no group "no-such-group-xyz" in /etc/group`},
		{"4000000", `user "4000000": uid 4000000 has no entry in /etc/passwd, so it has no group: give one (--user 4000000:GROUP)`},
		{"", `user must be USER or USER:GROUP, each a name or a numeric id (e.g. nobody, 65534, nobody:nogroup) (got "")`},
		{"a:b:c", `(got "a:b:c")`},
	} {
		marker := filepath.Join(t.TempDir(), "spawned")
		r := runShellsup(t, opts{args: []string{"--user", c.spec}, command: "touch " + marker})
		assertRefused(t, r, protocol.CategoryValidation, c.msg, marker)
	}
}

// TestUserCwdUnreachable: a working directory the user cannot search is
// exec_failed (126), naming the directory, in every tier.
func TestUserCwdUnreachable(t *testing.T) {
	needUserNobody(t)
	private := t.TempDir() // 0700, root's
	for name, tier := range userTiers() {
		t.Run(name, func(t *testing.T) {
			marker := filepath.Join(os.TempDir(), fmt.Sprintf("shellsup-user-spawned-%d", os.Getpid()))
			r := runShellsup(t, opts{args: append([]string{"--user", "nobody", "--cwd", private}, tier...), command: "touch " + marker})
			require.NotNil(t, r.errf, "frames %v", r.frameTypes())
			assert.Equal(t, protocol.CategoryExecFailed, r.errf.Category)
			assert.Contains(t, r.errf.Message, fmt.Sprintf("chdir %q as user nobody", private))
			assert.Contains(t, r.errf.Message, "nobody cannot search directory")
			assert.Equal(t, 126, r.exit)
			assert.NoFileExists(t, marker)
		})
	}
}

// TestUserFromCapabilities: a shellsup that is not root but holds
// CAP_SETUID, CAP_SETGID and CAP_KILL (ambient, as a service manager gives
// them) runs the command as another uid with no capability, and cleans up
// its setsid sleeper; without CAP_KILL it could not, and refuses.
func TestUserFromCapabilities(t *testing.T) {
	bin, dir := unprivileged(t)
	run := func(caps, marker string, tok reapertest.Token) (string, int) {
		cmd := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps="+caps, "--ambient-caps="+caps,
			bin, "--cwd", dir, "--user", "4000000:4000000", "--",
			`setsid sleep 300 </dev/null >/dev/null 2>&1 & id -u; id -g; grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status; touch `+marker)
		cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin", tok.Env()}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return string(out), code
	}
	t.Run("with CAP_KILL", func(t *testing.T) {
		tok := reapertest.NewToken()
		marker := filepath.Join(dir, "ran")
		out, code := run("+setuid,+setgid,+kill", marker, tok)
		require.Equal(t, 0, code, out)
		assert.Regexp(t, `^4000000\n4000000\nCapInh:\s+0+\nCapPrm:\s+0+\nCapEff:\s+0+\nCapAmb:\s+0+\n`, out)
		assert.FileExists(t, marker)
		reapertest.Check(t, tok)
	})
	t.Run("without CAP_KILL", func(t *testing.T) {
		marker := filepath.Join(dir, "spawned")
		out, code := run("+setuid,+setgid", marker, reapertest.NewToken())
		assert.Equal(t, 125, code, out)
		assert.Contains(t, out, "--user 4000000:4000000: shellsup must run as root or with CAP_SETUID, CAP_SETGID and CAP_KILL to run the command as another user; it runs as uid 65534 without CAP_KILL")
		assert.NoFileExists(t, marker)
	})
}

// TestUserCannotRaiseMaxMemory: nor can it raise memory.max (v2) or
// memory.limit_in_bytes (v1).
func TestUserCannotRaiseMaxMemory(t *testing.T) {
	needUserNobody(t)
	needCgroupTier(t)
	want := strconv.Itoa(64 << 20)
	r := runShellsup(t, opts{
		args: []string{"--user", "nobody", "--cwd", "/", "--max-memory", "64M"},
		command: limitCheck("memory.max", "memory", "memory.limit_in_bytes", want) + `f=$v2; [ -r "$f" ] || f=$v1
echo max > "$f" 2>/dev/null && echo "wrote max"
echo 9999999999 > "$f" 2>/dev/null && echo "wrote a number"
echo "limit $(cat "$f")"`,
	})
	tot := requireTotals(t, r)
	require.NotEqual(t, 99, r.exit, "the limit was not in force: %s", tot.Stdout)
	assert.Equal(t, "limit "+want+"\n", tot.Stdout)
}
