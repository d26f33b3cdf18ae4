//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/internal/proctest"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/reaper/reapertest"
)

// sandboxUser is who runs a sandbox test: shellsup as root, as nobody, or
// as root with --user nobody. uid is the command's.
type sandboxUser struct {
	name string
	bin  func(t *testing.T, bin string) string // the binary (or wrapper) to run
	args []string
	uid  int // the command's
	self int // shellsup's
}

func sandboxUsers() []sandboxUser {
	same := func(t *testing.T, bin string) string { return bin }
	return []sandboxUser{
		{name: "root", bin: same, uid: 0},
		{name: "nobody", bin: nobodyWrapper, uid: 65534, self: 65534},
		{name: "root --user nobody", bin: same, args: []string{"--user", "nobody"}, uid: 65534},
	}
}

// nobodyWrapper copies bin where nobody can run it and returns a wrapper
// that execs the copy as nobody (uid and gid 65534, no groups), its stdout
// on a pipe of nobody's.
func nobodyWrapper(t *testing.T, bin string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody")
	}
	dir := worldDir(t)
	copy := filepath.Join(dir, "shellsup")
	copyFile(t, proctest.Unwrapped(bin), copy)
	wrapper := filepath.Join(dir, "as-nobody")
	script := "#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups /bin/bash -c 'set -o pipefail; \"$0\" \"$@\" | cat' " +
		strconv.Quote(copy) + ` "$@"` + "\n"
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return wrapper
}

// noAdminWrapper runs bin as root without CAP_SYS_ADMIN (as in a
// container): no network namespace without a user namespace. The tier
// wrapper is left out: --pidns needs CAP_SYS_ADMIN as root.
func noAdminWrapper(t *testing.T, bin string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	wrapper := filepath.Join(worldDir(t), "no-admin")
	script := "#!/bin/sh\nexec setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin " + strconv.Quote(proctest.Unwrapped(bin)) + ` "$@"` + "\n"
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	return wrapper
}

// ownedDir is a new directory under /tmp (t.TempDir's parent is private to
// root) owned by uid.
func ownedDir(t *testing.T, uid int) string {
	t.Helper()
	dir := worldDir(t)
	require.NoError(t, os.Chown(dir, uid, uid))
	return dir
}

// sandboxPlace is a workspace, a HOME and a directory outside both, all
// the command's user's, with a victim file outside and a link to it
// inside.
type sandboxPlace struct {
	ws, home, out string
}

func newSandboxPlace(t *testing.T, uid int) sandboxPlace {
	p := sandboxPlace{ws: ownedDir(t, uid), home: ownedDir(t, uid), out: ownedDir(t, uid)}
	for _, f := range []string{filepath.Join(p.out, "victim"), filepath.Join(p.ws, "file")} {
		require.NoError(t, os.WriteFile(f, []byte("orig\n"), 0o644))
		require.NoError(t, os.Chown(f, uid, uid))
	}
	require.NoError(t, os.Mkdir(filepath.Join(p.ws, ".git"), 0o755))
	require.NoError(t, os.Chown(filepath.Join(p.ws, ".git"), uid, uid))
	require.NoError(t, os.Symlink(filepath.Join(p.out, "victim"), filepath.Join(p.ws, "link")))
	require.NoError(t, os.Lchown(filepath.Join(p.ws, "link"), uid, uid))
	return p
}

// sandboxProbe is a script that tries each write and prints one line per
// try: "NAME rc=N MESSAGE".
func sandboxProbe(p sandboxPlace, tmpName string) string {
	tries := [][2]string{
		{"home", `echo x > ` + p.home + `/x`}, // $HOME is the user's own under --user
		{"tmp", `echo x > /tmp/` + tmpName},
		{"parent", `echo x > ../x`},
		{"inside", `echo x > ./inside`},
		{"git", `echo x > .git/config`},
		{"symlink-out", `echo pwned > link`},
		{"ln-s-out", `ln -s "$PWD/file" ` + p.out + `/sym`},
		{"rename-out", `mv file ` + p.out + `/moved`},
		{"hardlink-in", `ln ` + p.out + `/victim hl && echo pwned > hl`},
		{"hardlink-out", `ln file ` + p.out + `/hl2`},
		{"truncate-out", `truncate -s 0 ` + p.out + `/victim`},
		{"private-tmp", `echo t > "$TMPDIR/f" && [ "$(cat "$TMPDIR/f")" = t ] && [ "$(stat -c %a "$TMPDIR")" = 700 ]`},
		{"tmp-locked", `mkdir -p "$TMPDIR/d/e" && touch "$TMPDIR/d/e/f" && ln -s / "$TMPDIR/d/root" && chmod 0 "$TMPDIR/d"`},
		{"devnull", `echo x > /dev/null`},
		{"signal-outside", `kill -0 $PPID`}, // shellsup, or the --pidns init
		{"no-new-privs", `grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/self/status`},
	}
	var b strings.Builder
	for _, tr := range tries {
		fmt.Fprintf(&b, "out=$( { %s; } 2>&1 ); echo %q rc=$? $out\n", tr[1], tr[0])
	}
	return b.String()
}

// probeLines maps each try's name to its line.
func probeLines(stdout string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(stdout, "\n") {
		name, rest, ok := strings.Cut(l, " ")
		if ok {
			m[name] = rest
		}
	}
	return m
}

// assertDenied: the try failed, with EACCES or EROFS (or, for a link or
// rename across directories, Landlock's EXDEV).
func assertDenied(t *testing.T, lines map[string]string, name string) {
	t.Helper()
	l, ok := lines[name]
	require.True(t, ok, "no line for %s in %v", name, lines)
	assert.False(t, strings.HasPrefix(l, "rc=0"), "%s was allowed: %q", name, l)
	assert.Regexp(t, "Permission denied|Read-only file system|Invalid cross-device link", l, name)
}

func assertAllowed(t *testing.T, lines map[string]string, name string) {
	t.Helper()
	assert.True(t, strings.HasPrefix(lines[name], "rc=0"), "%s was denied: %q", name, lines[name])
}

// TestSandboxWrites is acceptance 1's filesystem half, for each mode, as
// root, as nobody and as root with --user nobody, with and without
// --pidns: writes to $HOME, /tmp and ../ fail; links, renames and
// truncation out of the workspace fail; the workspace (and its .git) is
// writable only under workspace-write; the private TMPDIR works, is 0700
// and is gone after the cleanup, which counts it. shellsup itself stays
// unrestricted: it writes its spill files outside the workspace.
func TestSandboxWrites(t *testing.T) {
	for _, u := range sandboxUsers() {
		for _, mode := range []string{"read-only", "workspace-write"} {
			for _, tier := range [][]string{nil, {"--pidns"}} {
				if u.name == "nobody" && tier != nil {
					continue // TestSandboxNetwork covers an unprivileged --pidns sandbox
				}
				t.Run(u.name+"/"+mode+"/"+strings.Join(tier, ""), func(t *testing.T) {
					testSandboxWrites(t, u, mode, tier)
				})
			}
		}
	}
}

func testSandboxWrites(t *testing.T, u sandboxUser, mode string, tier []string) {
	p := newSandboxPlace(t, u.uid)
	spill := ownedDir(t, u.self) // a spill directory must be shellsup's
	tmpName := fmt.Sprintf("shellsup-sandbox-%d", time.Now().UnixNano())
	t.Cleanup(func() { os.Remove("/tmp/" + tmpName) })
	args := append([]string{"--no-login", "--sandbox", mode, "--workspace", p.ws, "--spill", spill}, u.args...)
	args = append(args, tier...)
	r := runShellsup(t, opts{bin: u.bin(t, shellsupBin), args: args, command: sandboxProbe(p, tmpName), env: []string{"HOME=" + p.home}})
	tot := requireTotals(t, r)
	lines := probeLines(tot.Stdout)
	for _, name := range []string{"home", "tmp", "parent", "symlink-out", "ln-s-out", "rename-out", "hardlink-out", "truncate-out"} {
		assertDenied(t, lines, name)
	}
	assertAllowed(t, lines, "private-tmp")
	assertAllowed(t, lines, "tmp-locked") // and the cleanup removes it all (below), as nobody too
	assertAllowed(t, lines, "devnull")
	assertAllowed(t, lines, "no-new-privs")
	assert.Regexp(t, "^rc=1 .*Operation not permitted", lines["signal-outside"], "Landlock's signal scope")
	if mode == "workspace-write" {
		assertAllowed(t, lines, "inside")
		assertAllowed(t, lines, "git")
	} else {
		assertDenied(t, lines, "inside")
		assertDenied(t, lines, "git")
	}
	for _, f := range []string{filepath.Join(p.home, "x"), "/tmp/" + tmpName, filepath.Join(filepath.Dir(p.ws), "x"), filepath.Join(p.out, "moved"), filepath.Join(p.out, "hl2"), filepath.Join(p.out, "sym")} {
		assert.NoFileExists(t, f)
	}
	victim, err := os.ReadFile(filepath.Join(p.out, "victim"))
	require.NoError(t, err)
	assert.Equal(t, "orig\n", string(victim), "the file outside the workspace was changed")

	require.NotNil(t, r.start.Sandbox)
	sb := r.start.Sandbox
	assert.Equal(t, mode, sb.Mode)
	assert.Equal(t, "host", sb.Network)
	assert.Equal(t, "landlock+landlock-scope", sb.Via, "this kernel has Landlock ABI 6 or later")
	assert.Equal(t, sb, tot.Sandbox)
	require.NotEmpty(t, sb.TmpDir)
	assert.Contains(t, sb.Writable, sb.TmpDir)
	assert.Equal(t, mode == "workspace-write", len(sb.Writable) > 0 && sb.Writable[0] == p.ws, "writable %v", sb.Writable)
	assert.NoDirExists(t, sb.TmpDir, "the private TMPDIR outlived the run")
	assert.Equal(t, 6, tot.Cleanup.TmpRemoved, "the private TMPDIR, f, d, e, e/f and the link")
	require.NotNil(t, tot.Spill)
	spilled, err := os.ReadFile(tot.Spill.Stdout)
	require.NoError(t, err, "shellsup itself must stay unrestricted")
	assert.Equal(t, tot.Stdout, string(spilled))
}

// TestSandboxProtect: --protect keeps a directory of the workspace
// read-only; entries beside it stay writable, and nothing new can be made
// directly in a directory on the way to it (docs/sandbox.md).
func TestSandboxProtect(t *testing.T) {
	p := newSandboxPlace(t, 0)
	require.NoError(t, os.Mkdir(filepath.Join(p.ws, "src"), 0o755))
	command := `out=$( { echo x > .git/config; } 2>&1 ); echo "git rc=$? $out"
out=$( { echo x > src/a; } 2>&1 ); echo "src rc=$? $out"
out=$( { echo x >> file; } 2>&1 ); echo "file rc=$? $out"
out=$( { echo x > newtop; } 2>&1 ); echo "newtop rc=$? $out"`
	r := runShellsup(t, opts{args: []string{"--no-login", "--sandbox", "workspace-write", "--workspace", p.ws, "--protect", ".git"}, command: command})
	tot := requireTotals(t, r)
	lines := probeLines(tot.Stdout)
	assertDenied(t, lines, "git")
	assertAllowed(t, lines, "src")
	assertAllowed(t, lines, "file")
	assertDenied(t, lines, "newtop")
	assert.NoFileExists(t, filepath.Join(p.ws, ".git", "config"))
	assert.NotContains(t, tot.Sandbox.Writable, p.ws, "the workspace is not writable as a whole")
	assert.Contains(t, tot.Sandbox.Writable, filepath.Join(p.ws, "src"))
}

// TestSandboxNoDeviceNodes: a root command cannot make a device node in
// its TMPDIR or its workspace (which it could then open, beneath a write
// rule, to write a disk or another terminal): making devices is handled and
// granted nowhere, in each mode and tier.
func TestSandboxNoDeviceNodes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mknod needs CAP_MKNOD")
	}
	command := `for d in "$TMPDIR" "$PWD"; do
out=$( { mknod "$d/c" c 1 3; } 2>&1 ); echo "char rc=$? $out"
out=$( { mknod "$d/b" b 7 0; } 2>&1 ); echo "block rc=$? $out"
ls -l "$d/c" "$d/b" 2>/dev/null; done`
	for _, mode := range []string{"read-only", "workspace-write"} {
		for _, tier := range [][]string{nil, {"--pidns"}} {
			t.Run(mode+"/"+strings.Join(tier, ""), func(t *testing.T) {
				ws := worldDir(t)
				args := append([]string{"--no-login", "--sandbox", mode, "--workspace", ws, "--cwd", ws}, tier...)
				r := runShellsup(t, opts{args: args, command: command})
				tot := requireTotals(t, r)
				assert.Equal(t, 4, strings.Count(tot.Stdout, "Permission denied"), "stdout %q", tot.Stdout)
				assert.NotContains(t, tot.Stdout, "rc=0")
				assert.NoFileExists(t, filepath.Join(ws, "c"))
				assert.NoFileExists(t, filepath.Join(ws, "b"))
			})
		}
	}
}

// TestSandboxNoTIOCSTI: a root command cannot type into a terminal outside
// the run: it may open one read-only (reading is not handled), but ioctl on
// a device opened under the rules is refused (Landlock's IOCTL_DEV), so its
// TIOCSTI fails and nothing reaches the terminal's input; its own /dev/null
// keeps its ioctls.
func TestSandboxNoTIOCSTI(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: TIOCSTI into a terminal not one's own needs CAP_SYS_ADMIN")
	}
	term := newPty(t) // read all along, so its echo never blocks
	tty := term.slave
	// TIOCSTI into the terminal outside; TCGETS on /dev/null, which
	// reaches the driver (ENOTTY), not Landlock (EACCES).
	sti := `import errno, fcntl, os, sys, termios
for path, req, arg in ((sys.argv[1], termios.TIOCSTI, b"x"), (sys.argv[1], termios.TIOCSTI, b"\n"), ("/dev/null", termios.TCGETS, bytes(64))):
    try:
        fcntl.ioctl(os.open(path, os.O_RDONLY | os.O_NOCTTY), req, arg)
        print(path, "ok")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
`
	command := "python3 -c '" + sti + "' " + term.name // sti has no single quote
	for _, tier := range [][]string{nil, {"--pidns"}} {
		r := runShellsup(t, opts{args: append([]string{"--no-login", "--sandbox", "read-only"}, tier...), command: command})
		tot := requireTotals(t, r)
		assert.Equal(t, fmt.Sprintf("%[1]s EACCES\n%[1]s EACCES\n/dev/null ENOTTY\n", term.name), tot.Stdout, "%v: stderr %q", tier, tot.Stderr)
		n, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCINQ)
		require.NoError(t, err)
		assert.Zero(t, n, "%v: input reached the terminal outside", tier)
	}
	// The fourth review's finding 1: bash leads a session with no terminal,
	// so opening one (read-only, without O_NOCTTY) makes it bash's
	// controlling terminal, which /dev/tty then names. /dev/tty is not
	// among the devices: neither its ioctls nor a write reach the terminal.
	viaTTY := `import errno, fcntl, os, termios
os.open("` + term.name + `", os.O_RDONLY)
for what, act in (("sti", lambda fd: fcntl.ioctl(fd, termios.TIOCSTI, b"x")), ("write", lambda fd: os.write(fd, b"FORGED"))):
    try:
        act(os.open("/dev/tty", os.O_RDONLY if what == "sti" else os.O_WRONLY))
        print(what, "ok")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
`
	for _, tier := range [][]string{nil, {"--pidns"}} {
		r := runShellsup(t, opts{args: append([]string{"--no-login", "--sandbox", "read-only"}, tier...), command: "python3 -c '" + viaTTY + "'"})
		tot := requireTotals(t, r)
		assert.Equal(t, "sti EACCES\nwrite EACCES\n", tot.Stdout, "%v: stderr %q", tier, tot.Stderr)
		n, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCINQ)
		require.NoError(t, err)
		assert.Zero(t, n, "%v: input reached the terminal outside through /dev/tty", tier)
	}
	assert.NotContains(t, term.output(t), "FORGED", "a write through /dev/tty reached the terminal outside")
}

// hostListener listens on 127.0.0.1 in the test's (the host's) network
// namespace and counts the connections it accepts.
func hostListener(t *testing.T) (port int, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_, _ = io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, accepted
}

// networkProbe connects to the host's listener (python3, curl, and bash's
// /dev/tcp posting $(env), the injection; a Multipath TCP socket and a TCP
// Fast Open sendto, which Landlock's TCP rules do not see), then starts a
// server on 127.0.0.1 and connects to it.
func networkProbe(port int) string {
	return fmt.Sprintf(`python3 -c 'import socket; socket.create_connection(("127.0.0.1", %[1]d), timeout=2)' 2>/dev/null; echo "python rc=$?"
python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.settimeout(2); s.connect(("127.0.0.1", %[1]d))' 2>/dev/null; echo "mptcp rc=$?"
python3 -c 'import socket; s = socket.socket(); s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", %[1]d))' 2>/dev/null; echo "fastopen rc=$?"
curl -s -m 2 --data "$(env)" http://127.0.0.1:%[1]d/ >/dev/null 2>&1; echo "curl rc=$?"
{ env > /dev/tcp/127.0.0.1/%[1]d; } 2>/dev/null; echo "devtcp rc=$?"
python3 -c '
import socket, threading
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
def serve():
    c, _ = l.accept(); c.sendall(b"hello"); c.close()
threading.Thread(target=serve, daemon=True).start()
print("own", socket.create_connection(l.getsockname(), timeout=2).recv(5).decode())
' 2>/dev/null || echo "own failed"`, port)
}

// TestSandboxNetwork is acceptance 1's network half: under --no-network
// the host's listener on 127.0.0.1 is unreachable (python3, curl, and the
// $(env) injection reach nothing), while a server the command starts on
// 127.0.0.1 answers it where the command has a network namespace of its
// own: as root, and with --pidns (or --pidns-auto, the bindings' default,
// which puts nobody's run in a namespace) also as nobody. Without either,
// nobody's run falls back to Landlock TCP rules with the seccomp filter
// beside them (no Multipath TCP, no Fast Open), and the report says so.
func TestSandboxNetwork(t *testing.T) {
	cases := []struct {
		name      string
		user      sandboxUser
		args      []string
		network   string
		via       string
		ownServer bool
	}{
		{"root", sandboxUsers()[0], nil, "loopback", "landlock-domain+seccomp-nsfs+netns", true}, // this kernel has nsfs handles (Linux 6.18)
		{"root --pidns", sandboxUsers()[0], []string{"--pidns"}, "loopback", "seccomp-nsfs+netns", true},
		{"root --user nobody read-only", sandboxUsers()[2], []string{"--sandbox", "read-only"}, "loopback", "landlock+landlock-scope+netns", true},
		{"nobody --pidns read-only", sandboxUsers()[1], []string{"--pidns", "--sandbox", "read-only"}, "loopback", "landlock+landlock-scope+netns", true},
		{"nobody --pidns-auto", sandboxUsers()[1], []string{"--pidns-auto"}, "loopback", "netns", true},
		{"nobody --pidns-auto read-only", sandboxUsers()[1], []string{"--pidns-auto", "--sandbox", "read-only"}, "loopback", "landlock+landlock-scope+netns", true},
		{"nobody", sandboxUsers()[1], nil, "none", "landlock-tcp+landlock-scope", false},
		{"root without CAP_SYS_ADMIN", sandboxUser{name: "root -sys_admin", bin: noAdminWrapper}, nil, "none", "landlock-tcp+landlock-scope", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			port, accepted := hostListener(t)
			args := append([]string{"--no-login", "--no-network", "--cwd", "/"}, c.user.args...)
			args = append(args, c.args...)
			r := runShellsup(t, opts{bin: c.user.bin(t, shellsupBin), args: args, command: networkProbe(port)})
			tot := requireTotals(t, r)
			lines := probeLines(tot.Stdout)
			for _, name := range []string{"python", "curl", "devtcp", "mptcp", "fastopen"} {
				assert.NotEqual(t, "rc=0", lines[name], "%s reached the host's listener", name)
			}
			assert.Zero(t, accepted.Load(), "the host's listener was reached")
			if c.ownServer {
				assert.Equal(t, "hello", lines["own"], "the command's own server on 127.0.0.1; stdout %q", tot.Stdout)
			}
			require.NotNil(t, tot.Sandbox)
			assert.NotNil(t, tot.Sandbox.Writable, "a list, empty without filesystem rules")
			assert.Equal(t, c.network, tot.Sandbox.Network)
			want := c.via
			if proctest.Tier() == "pidns" { // every run forced into --pidns: no host pid to name, so no domain
				want = strings.TrimPrefix(want, "landlock-domain+")
			}
			assert.Equal(t, want, tot.Sandbox.Via)
		})
	}
	t.Run("control: without --no-network the listener is reached", func(t *testing.T) {
		port, accepted := hostListener(t)
		r := runShellsup(t, opts{args: []string{"--no-login"}, command: networkProbe(port)})
		tot := requireTotals(t, r)
		lines := probeLines(tot.Stdout)
		for _, name := range []string{"python", "mptcp", "fastopen"} {
			assert.Equal(t, "rc=0", lines[name], "%s: the probe reaches a listener; stdout %q", name, tot.Stdout)
		}
		assert.Positive(t, accepted.Load())
		assert.Nil(t, tot.Sandbox)
	})
}

// leaveProbe tries each way a root command has back into the host's
// network namespace (fifth review, finding 5), each in a process of its
// own, and connects to the host's listener on 127.0.0.1 from there:
// nsenter through /proc/$PPID/ns/net (shellsup's), setns on a pidfd of
// $PPID, its PIDFD_GET_NET_NAMESPACE, and open_by_handle_at of the
// host's network namespace's nsfs handle (the test's own, typed and in
// hex; "" where the kernel has none). Each prints its name and CONNECTED
// or why not; the command's own server on 127.0.0.1 answers last.
func leaveProbe(t *testing.T, port int, handle string) string {
	script := filepath.Join(t.TempDir(), "leave.py")
	require.NoError(t, os.WriteFile(script, []byte(leaveWays), 0o644))
	ways := "pidfd-setns pidfd-ioctl"
	if handle != "" {
		ways += " handle"
	}
	return fmt.Sprintf(`nsenter --net=/proc/$PPID/ns/net python3 -c 'import socket; socket.create_connection(("127.0.0.1", %[1]d), timeout=2); print("CONNECTED")' 2>&1 | sed 's/^/nsenter /' | tail -1
for way in %[2]s; do python3 %[3]s $way %[1]d $PPID %[4]s; done
echo "nnp $(awk '/^NoNewPrivs/ {print $2}' /proc/self/status)"
python3 -c '
import socket, threading
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
def serve():
    c, _ = l.accept(); c.sendall(b"hello"); c.close()
threading.Thread(target=serve, daemon=True).start()
print("own", socket.create_connection(l.getsockname(), timeout=2).recv(5).decode())
' 2>/dev/null || echo "own failed"`, port, ways, script, handle)
}

// leaveWays is leaveProbe's python3 script: argv way, port, ppid, handle.
const leaveWays = `
import ctypes, fcntl, os, platform, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
way, port, ppid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def fail(what):
    print(way, what, os.strerror(ctypes.get_errno()), flush=True); sys.exit()
def get_fd():
    if way == "handle":
        typ, raw = sys.argv[4].split(":")
        raw = bytes.fromhex(raw)
        buf = ctypes.create_string_buffer(struct.pack("=Ii", len(raw), int(typ)) + raw)
        nr = {"x86_64": 304, "aarch64": 265}[platform.machine()]
        return libc.syscall(nr, -10003, buf, os.O_RDONLY)  # FD_NSFS_ROOT
    pfd = os.pidfd_open(ppid)
    if way == "pidfd-setns":
        return pfd
    try:
        return fcntl.ioctl(pfd, 0xFF04)  # PIDFD_GET_NET_NAMESPACE
    except OSError as e:
        print(way, "ioctl", e.strerror, flush=True); sys.exit()
fd = get_fd()
if fd < 0:
    fail("open")
if libc.setns(fd, 0x40000000) != 0:
    fail("setns")
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close(); print(way, "CONNECTED")
except OSError as e:
    print(way, "connect", e.strerror)
`

// hostNetHandle is the nsfs handle of the test's network namespace, the
// host's, as leaveProbe takes it; "" where nsfs has no handles.
func hostNetHandle(t *testing.T) string {
	f, err := os.Open("/proc/self/ns/net")
	require.NoError(t, err)
	defer f.Close()
	h, _, err := unix.NameToHandleAt(int(f.Fd()), "", unix.AT_EMPTY_PATH)
	if err == unix.EOPNOTSUPP {
		return ""
	}
	require.NoError(t, err)
	return fmt.Sprintf("%d:%x", h.Type(), h.Bytes())
}

// TestNoNetworkRootStaysInItsNamespace is the fifth review's finding 5: a
// root command under --no-network without --sandbox, --pidns or --user
// entered shellsup's network namespace (the host's) with nsenter
// --net=/proc/$PPID/ns/net and reached a host listener on 127.0.0.1,
// while the report said loopback. Now a Landlock domain (the abstract
// Unix socket scope alone) makes every process outside refuse it ptrace
// access: /proc/$PPID/ns/net is EACCES, a pidfd's setns EPERM and its
// PIDFD_GET_NET_NAMESPACE EACCES; the seccomp filter refuses
// open_by_handle_at (EPERM), which this kernel's nsfs handles (Linux
// 6.18) would open the host's namespace by, under --sandbox and --pidns
// too. The command's own loopback still works, and without --sandbox
// no_new_privs stays unset.
func TestNoNetworkRootStaysInItsNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the finding is a root command's")
	}
	if proctest.Tier() == "pidns" {
		t.Skip("every run forced into --pidns: its own --pidns case covers it")
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("needs nsenter")
	}
	handle := hostNetHandle(t)
	cases := []struct {
		name, via string
		args      []string
		want      map[string]string // the way: how it is refused ("" for any refusal)
	}{
		{"root", "landlock-domain+seccomp-nsfs+netns", nil, map[string]string{
			"nsenter": "Permission denied", "pidfd-setns": "setns Operation not permitted",
			"pidfd-ioctl": "ioctl Permission denied", "handle": "open Operation not permitted"}},
		{"root --sandbox read-only", "landlock+landlock-scope+seccomp-nsfs+netns", []string{"--sandbox", "read-only"}, map[string]string{
			"nsenter": "Permission denied", "pidfd-setns": "setns Operation not permitted",
			"pidfd-ioctl": "ioctl Permission denied", "handle": "open Operation not permitted"}},
		{"root --pidns", "seccomp-nsfs+netns", []string{"--pidns"}, map[string]string{"handle": "open Operation not permitted"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			port, accepted := hostListener(t)
			args := append([]string{"--no-login", "--no-network", "--cwd", "/"}, c.args...)
			r := runShellsup(t, opts{args: args, command: leaveProbe(t, port, handle)})
			tot := requireTotals(t, r)
			lines := probeLines(tot.Stdout)
			ways := []string{"nsenter", "pidfd-setns", "pidfd-ioctl"}
			if handle != "" {
				ways = append(ways, "handle")
			}
			for _, way := range ways {
				assert.NotContains(t, lines[way], "CONNECTED", "%s: back in the host's network namespace; stdout %q, stderr %q", way, tot.Stdout, tot.Stderr)
				assert.Contains(t, lines[way], c.want[way], "%s; stdout %q", way, tot.Stdout)
			}
			assert.Zero(t, accepted.Load(), "the host's listener was reached")
			assert.Equal(t, "hello", lines["own"], "the command's own server on 127.0.0.1; stdout %q", tot.Stdout)
			if c.args == nil {
				assert.Equal(t, "0", lines["nnp"], "the bare domain leaves no_new_privs unset")
			}
			require.NotNil(t, tot.Sandbox)
			assert.Equal(t, "loopback", tot.Sandbox.Network)
			if handle == "" {
				c.via = strings.Replace(c.via, "seccomp-nsfs+", "", 1)
			}
			assert.Equal(t, c.via, tot.Sandbox.Via)
		})
	}
}

// TestNoNetworkRootBoundNamespace is what stays open to a root command
// (docs/sandbox.md): a network namespace bind-mounted in the filesystem
// (/run/netns/NAME, as ip netns makes them; here the host's, mounted by
// the test) is a file to open, not a process to ptrace, so nsenter
// through it reaches the host's listener, under --sandbox read-only too.
// --user is the answer.
func TestNoNetworkRootBoundNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	bound := filepath.Join(worldDir(t), "hostnet") // nobody may open it: its setns is what fails
	require.NoError(t, os.WriteFile(bound, nil, 0o644))
	require.NoError(t, unix.Mount("/proc/self/ns/net", bound, "", unix.MS_BIND, ""))
	t.Cleanup(func() { _ = unix.Unmount(bound, unix.MNT_DETACH) })
	for _, args := range [][]string{{"--sandbox", "read-only"}, {"--user", "nobody", "--cwd", "/tmp"}} {
		port, accepted := hostListener(t)
		cmd := fmt.Sprintf(`nsenter --net=%s python3 -c 'import socket; socket.create_connection(("127.0.0.1", %d), timeout=2); print("CONNECTED")' 2>&1 | tail -1`, bound, port)
		r := runShellsup(t, opts{args: append([]string{"--no-login", "--no-network"}, args...), command: cmd})
		tot := requireTotals(t, r)
		if args[0] == "--user" {
			assert.Contains(t, tot.Stdout, "Operation not permitted", "nobody cannot setns")
			assert.Zero(t, accepted.Load())
			continue
		}
		assert.Equal(t, "CONNECTED\n", tot.Stdout, "the documented hole: a bound namespace is a file")
		assert.Positive(t, accepted.Load())
	}
}

// TestSandboxRefused is acceptance 2: where the kernel lacks what a mode
// needs (simulated through the test seam), the run is refused with exit
// 125, containment_unavailable and the reason, and nothing is spawned.
func TestSandboxRefused(t *testing.T) {
	ws := worldDir(t)
	cases := []struct {
		name, kernel string
		nobody       bool
		args         []string
		msg          string
	}{
		{"read-only without Landlock", "landlock=0", false, []string{"--sandbox", "read-only"}, "Landlock is disabled"},
		{"workspace-write without Landlock", "landlock=0", false, []string{"--sandbox", "workspace-write", "--workspace", ws}, "Landlock is disabled"},
		{"read-only with ABI 2", "landlock=2", false, []string{"--sandbox", "read-only"}, "its Landlock ABI is 2"},
		{"workspace-write with ABI 4 (no device ioctl rules)", "landlock=4", false, []string{"--sandbox", "workspace-write", "--workspace", ws}, "needs Landlock ABI 5 or later (Linux 6.10)"},
		{"no-network without namespaces or Landlock", "landlock=0,netns=0", false, []string{"--no-network"}, "--no-network needs a network namespace"},
		{"no-network with ABI 3 as nobody", "landlock=3", true, []string{"--no-network"}, "shellsup is not root"},
		{"no-network as root with ABI 5: no domain to keep it in the namespace", "landlock=5", false, []string{"--no-network"}, "--no-network for a root command needs Landlock ABI 6 or later (Linux 6.12) to keep it in its network namespace"},
		{"no-network as root, nsfs handles without seccomp", "nshandles=1,seccomp=0", false, []string{"--no-network"}, "needs a seccomp filter refusing open_by_handle_at(2)"},
		{"no-network --pidns as nobody without user namespaces", "landlock=0,userns=0", true, []string{"--no-network", "--pidns"}, "--pidns cannot make the user namespace"},
		{"read-only --pidns without Landlock", "landlock=0", false, []string{"--sandbox", "read-only", "--pidns"}, "Landlock is disabled"},
		{"no-network as nobody without seccomp", "seccomp=0", true, []string{"--no-network"}, "with a seccomp filter beside them, which cannot be had here: disabled (simulated"},
		{"no-network as nobody, the filter refused", "seccomp=refuse", true, []string{"--no-network"}, "installing the seccomp filter of the Landlock TCP rules: prctl(PR_SET_SECCOMP): invalid argument"},
		{"no-network --pidns as nobody without netns, the filter refused in the init", "netns=0,seccomp=refuse", true, []string{"--no-network", "--pidns"}, "the seccomp filter beside the TCP rules) in the init: invalid argument"},
		{"no-network --pidns-auto as nobody without netns, the filter refused", "netns=0,seccomp=refuse", true, []string{"--no-network", "--pidns-auto"}, "installing the seccomp filter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := seamsBin
			if c.nobody {
				bin = nobodyWrapper(t, seamsBin)
			}
			marker := filepath.Join(worldDir(t), "spawned")
			r := runShellsup(t, opts{bin: bin, args: append([]string{"--cwd", ws}, c.args...), env: []string{"SHELLSUP_TEST_SANDBOX_KERNEL=" + c.kernel}, command: "touch " + marker})
			assertRefused(t, r, protocol.CategoryContainmentUnavailable, c.msg, marker)
		})
	}
}

// TestSandboxValidated: a bad mode, workspace-write without a workspace,
// --protect without it or outside the workspace are refused, quoted, and
// nothing is spawned.
func TestSandboxValidated(t *testing.T) {
	ws := worldDir(t)
	outside := worldDir(t)
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"--sandbox", "readonly"}, `sandbox must be one of read-only, workspace-write, none (got "readonly")`},
		{[]string{"--sandbox="}, `invalid value "" for flag -sandbox: sandbox must be one of read-only, workspace-write, none`},
		{[]string{"--sandbox", "workspace-write"}, "sandbox workspace-write needs --workspace DIR"},
		{[]string{"--sandbox", "read-only", "--workspace", ws, "--protect", ".git"}, "needs --sandbox workspace-write (got --sandbox read-only)"},
		{[]string{"--sandbox", "workspace-write", "--workspace", ws, "--protect", outside}, "outside workspace"},
		{[]string{"--sandbox", "workspace-write", "--workspace", ws, "--protect", "missing"}, `protect "missing" cannot be resolved`},
	}
	for _, c := range cases {
		marker := filepath.Join(t.TempDir(), "spawned")
		r := runShellsup(t, opts{args: c.args, command: "touch " + marker})
		assertRefused(t, r, protocol.CategoryValidation, c.msg, marker)
	}
}

// TestSandboxShapes is acceptance 3: leak shapes of the integration suite
// are cleaned up inside each mode, on exit and on timeout, as every run's
// are.
func TestSandboxShapes(t *testing.T) {
	ws := worldDir(t)
	modes := map[string][]string{
		"read-only":                    {"--sandbox", "read-only"},
		"workspace-write":              {"--sandbox", "workspace-write", "--workspace", ws},
		"no-network":                   {"--no-network"},
		"read-only no-network --pidns": {"--sandbox", "read-only", "--no-network", "--pidns"},
	}
	var picked []shape
	for _, s := range shapes(t) {
		switch s.name {
		case "background job holding stdout", "setsid", "double fork on dev null", "TERM HUP INT ignorer loop":
			picked = append(picked, s)
		}
	}
	require.Len(t, picked, 4)
	for name, args := range modes {
		for _, s := range picked {
			t.Run(name+"/exit/"+s.name, func(t *testing.T) {
				r := runShellsup(t, opts{args: append([]string{"--grace", "0.5"}, args...), command: s.setup + "\necho ready; exit 7"})
				tot := requireTotals(t, r)
				assert.Equal(t, 7, r.exit)
				assert.Contains(t, tot.Stdout, "ready")
				assert.GreaterOrEqual(t, tot.Cleanup.Signalled, s.min)
				assertPrompt(t, tot, 500*time.Millisecond)
			})
			t.Run(name+"/timeout/"+s.name, func(t *testing.T) {
				r := runShellsup(t, opts{args: append([]string{"--grace", "0.5", "--timeout", "1"}, args...), command: s.setup + "\necho ready; sleep 300"})
				tot := requireTotals(t, r)
				assert.Equal(t, 124, r.exit)
				assert.Contains(t, tot.Stdout, "ready")
				assertPrompt(t, tot, 500*time.Millisecond)
			})
			t.Run(name+"/cancel/"+s.name, func(t *testing.T) {
				r := runShellsup(t, opts{
					args: append([]string{"--grace", "0.5"}, args...), command: s.setup + "\necho ready; sleep 300", control: true,
					onFrame: onReady(func(r *running) { require.NoError(t, r.send(&protocol.Cancel{})) }),
				})
				tot := requireTotals(t, r)
				assert.Equal(t, 130, r.exit)
				assert.True(t, tot.Cancelled)
				assertPrompt(t, tot, 500*time.Millisecond)
			})
		}
	}
}

// TestSandboxAllShapes: every leak shape of the integration suite, in a
// workspace-write sandbox without network (its workspace holds the shapes'
// helper files), is cleaned up when bash exits.
func TestSandboxAllShapes(t *testing.T) {
	for _, s := range shapes(t) {
		t.Run(s.name, func(t *testing.T) {
			args := []string{"--grace", "0.5", "--sandbox", "workspace-write", "--workspace", os.TempDir(), "--cwd", os.TempDir(), "--no-network"}
			r := runShellsup(t, opts{args: args, command: s.setup + "\necho ready; exit 7"})
			tot := requireTotals(t, r)
			assert.Equal(t, 7, r.exit, "stderr %q", tot.Stderr)
			assert.Contains(t, tot.Stdout, "ready")
			assert.GreaterOrEqual(t, tot.Cleanup.Signalled, s.min, "cleanup signalled too few processes")
			assertPrompt(t, tot, 500*time.Millisecond)
		})
	}
}

// TestSandboxLimits shows what the sandbox does not stop (docs/sandbox.md):
// reading the user's files, changing their mode, and connecting to a Unix
// socket reachable by path, even under --no-network.
func TestSandboxLimits(t *testing.T) {
	p := newSandboxPlace(t, 0)
	sock := filepath.Join(p.out, "daemon.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	command := fmt.Sprintf(`cat %[1]s/victim
chmod 600 %[1]s/victim && echo chmod-allowed
python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("%[2]s")' && echo unix-allowed`, p.out, sock)
	r := runShellsup(t, opts{args: []string{"--no-login", "--sandbox", "read-only", "--no-network", "--cwd", p.ws}, command: command})
	tot := requireTotals(t, r)
	assert.Equal(t, "orig\nchmod-allowed\nunix-allowed\n", tot.Stdout, "stderr %q", tot.Stderr)
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection did not arrive")
	}
	st, err := os.Stat(filepath.Join(p.out, "victim"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

// TestSandboxWithPTY: a PTY run gets the same sandbox: bash is on its
// terminal and still cannot write outside its private TMPDIR, in the
// default tier and under --pidns.
func TestSandboxWithPTY(t *testing.T) {
	home := t.TempDir()
	for _, extra := range [][]string{nil, {"--pidns"}} {
		args := append([]string{"--pty", "--sandbox", "read-only"}, extra...)
		r := runShellsup(t, opts{args: args, env: []string{"HOME=" + home},
			command: `touch "$HOME/x"; echo "rc=$?"; tty; echo ok > "$TMPDIR/y" && echo tmp-ok
[ -t 0 ] && [ -t 1 ] && echo isatty; stty size; stty size < /dev/tty 2>/dev/null || echo no-tty-ioctl; stty cols 100 && stty size`})
		tot := requireTotals(t, r)
		assert.Equal(t, 0, r.exit, "%v: %s", args, tot.Stdout)
		assert.Contains(t, tot.Stdout, "rc=1", args)
		assert.Contains(t, tot.Stdout, "/dev/pts/", args)
		assert.Contains(t, tot.Stdout, "tmp-ok", args)
		// the terminal's ioctls on bash's own fds; /dev/tty reopened takes
		// none (it names whatever terminal the process's session has)
		assert.Contains(t, tot.Stdout, "isatty", args)
		assert.Contains(t, tot.Stdout, "24 80\r\nno-tty-ioctl\r\n24 100", args)
		require.NotNil(t, r.start.Sandbox, args)
		assert.Equal(t, "read-only", r.start.Sandbox.Mode, args)
		assert.NoFileExists(t, filepath.Join(home, "x"), args)
	}
}

// TestSandboxTmpOfAKilledShellsupIsSwept: a shellsup SIGKILLed during a
// sandbox run cannot remove its private TMPDIR; `shellsup sweep` (which the
// bindings run after an unreported run) and the next sandbox run's
// start-up sweep remove it, and never the TMPDIR of a run still alive.
func TestSandboxTmpOfAKilledShellsupIsSwept(t *testing.T) {
	sweep := func() string {
		out, _ := exec.Command(shellsupBin, "sweep").CombinedOutput() // a stale leaf elsewhere may fail it
		return string(out)
	}
	var tmp, whileAlive string
	aliveThen := false
	ready := onReady(func(r *running) {
		whileAlive = sweep()
		_, err := os.Stat(tmp)
		aliveThen = tmp != "" && err == nil
		r.signal(unix.SIGKILL)
	})
	r := killedSandboxRun(t, `mkdir -p "$TMPDIR/a/b" && touch "$TMPDIR/a/f" && echo ready; exec sleep 30`,
		func(r *running, f protocol.Frame) {
			if s, ok := f.(*protocol.Start); ok && s.Sandbox != nil {
				tmp = s.Sandbox.TmpDir
			}
			ready(r, f)
		})
	require.NotEmpty(t, tmp, "stderr %q", r.stderr)
	assert.True(t, aliveThen, "a sweep beside a live run removed its TMPDIR: %s", whileAlive)
	assert.NotContains(t, whileAlive, "TMPDIR", "a sweep beside a live run removed something of it")
	require.DirExists(t, tmp, "a SIGKILLed shellsup leaves its private TMPDIR")
	out := sweep()
	assert.Contains(t, out, "removed the private TMPDIR "+tmp+" (4 entries)", out)
	assert.NoDirExists(t, tmp)

	// The next sandbox run sweeps what a killed one left, beside bash.
	r = killedSandboxRun(t, `touch "$TMPDIR/x" && echo ready; exec sleep 30`, onReady(func(r *running) { r.signal(unix.SIGKILL) }))
	require.NotNil(t, r.start)
	left := r.start.Sandbox.TmpDir
	require.DirExists(t, left)
	tot := requireTotals(t, runShellsup(t, opts{args: []string{"--no-login", "--sandbox", "read-only"}, command: "true"}))
	require.NotNil(t, tot.ExitCode)
	assert.Equal(t, 0, *tot.ExitCode)
	assert.NoDirExists(t, left, "the next sandbox run's start-up sweep removes a killed run's TMPDIR")
}

// killedSandboxRun runs command in a read-only sandbox under --pidns (the
// kernel ends the tree with shellsup), where onFrame SIGKILLs shellsup, and
// waits until the tree is gone.
func killedSandboxRun(t *testing.T, command string, onFrame func(*running, protocol.Frame)) result {
	tok := reapertest.NewToken()
	r := runShellsup(t, opts{args: []string{"--no-login", "--sandbox", "read-only", "--pidns"}, command: command,
		env: []string{tok.Env()}, onFrame: onFrame, noLeakCheck: true})
	require.Nil(t, r.totals, "shellsup was killed before its totals")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		reapertest.ReapOrphans() // the init, reparented to the test
		if len(reapertest.Find(tok)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			reapertest.Kill(tok)
			t.Fatalf("the tree outlived its SIGKILLed shellsup by 10 s")
		}
	}
	reapertest.Check(t, tok)
	return r
}

// TestNoNetworkRootMakesNoLinkInTheHost is the sixth review's veth finding
// (2026-12-02): rtnetlink names a network namespace by pid with no ptrace
// check, so a root command under --no-network made a veth pair with one
// end in shellsup's (the host's) namespace and reached its listeners.
// Outside --pidns the command's bounding set lacks CAP_NET_ADMIN; under
// --pidns no host process has a pid the command can name.
func TestNoNetworkRootMakesNoLinkInTheHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the finding is a root command's")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2)")
	}
	if proctest.Tier() == "pidns" {
		t.Skip("every run forced into --pidns: $PPID is the init, inside the namespace")
	}
	name := fmt.Sprintf("ss%d", os.Getpid()%100000)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
	for _, extra := range [][]string{nil, {"--sandbox", "read-only"}} {
		args := append([]string{"--no-login", "--no-network", "--cwd", "/"}, extra...)
		r := runShellsup(t, opts{args: args, command: `grep CapBnd /proc/self/status
ip link add ` + name + ` netns $PPID type veth peer name ` + name + `p 2>&1; echo "ip: $?"`})
		tot := requireTotals(t, r)
		assert.Contains(t, tot.Stdout, "Operation not permitted", "%v: %s", extra, tot.Stdout)
		assert.NotContains(t, tot.Stdout, "ip: 0", "%v", extra)
		assert.Error(t, exec.Command("ip", "link", "show", name).Run(), "%v: no link %s in the host's namespace", extra, name)
	}
}
