package shellsup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/shellsup/shellsup/internal/proctest"
)

func init() {
	helpers.Register("dumpable-harness", dumpableHarness)
}

// survivorCommand leaves a setsid survivor and SIGKILLs shellsup. The
// survivor waits for $DIR/returned, tries /proc/<harness>/environ once and
// writes "stolen" or "refused" to $DIR/verdict.
const survivorCommand = `H=$(awk '{print $4}' /proc/$PPID/stat)
setsid bash -c 'i=0; until [ -e "$DIR/returned" ]; do i=$((i+1)); [ $i -lt 1500 ] || exit; sleep 0.01; done
if tr "\0" "\n" < /proc/'$H'/environ > /dev/null 2>&1; then echo stolen; else echo refused; fi > "$DIR/verdict.tmp"
mv "$DIR/verdict.tmp" "$DIR/verdict"' </dev/null >/dev/null 2>&1 &
kill -9 $PPID`

// dumpableReport is what dumpableHarness prints.
type dumpableReport struct {
	Category string
	Dumpable int
	Verdict  string
}

// dumpableHarness runs survivorCommand, then a reported run, and prints
// whether it is dumpable and what the survivor could read.
func dumpableHarness([]string) int {
	var rep dumpableReport
	// NoPIDNamespace: under the default --pidns-auto the survivor could not outlive shellsup.
	_, err := Run(context.Background(), Request{Command: survivorCommand, Timeout: 20 * time.Second, NoPIDNamespace: true})
	var e *Error
	if errors.As(err, &e) {
		rep.Category = e.Category
	}
	if _, err := Run(context.Background(), Request{Command: "true"}); err != nil {
		fmt.Println("the later run:", err)
		return 1
	}
	rep.Dumpable, _ = unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	dir := os.Getenv("DIR")
	if err := os.WriteFile(filepath.Join(dir, "returned"), nil, 0o644); err != nil {
		fmt.Println(err)
		return 1
	}
	proctest.Await(20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "verdict"))
		return err == nil
	})
	b, _ := os.ReadFile(filepath.Join(dir, "verdict"))
	rep.Verdict = strings.TrimSpace(string(b))
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
	return 0
}

// TestUnreportedRunKeepsHarnessUndumpable is the review's finding 4
// (2026-12-02): the command, as the harness's user (nobody, subreaper
// tier), leaves a setsid survivor and SIGKILLs shellsup. Run returned the
// documented protocol error and gave the harness its dumpable setting
// back, and the survivor read /proc/<harness>/environ (it could as well
// ptrace the harness and forge later runs). Once a run was unreported the
// harness now stays non-dumpable for the rest of its life, later runs
// included.
func TestUnreportedRunKeepsHarnessUndumpable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the harness as nobody")
	}
	reapOrphansAfter(t) // the survivor is reparented to the test binary
	dir := nobodyDir(t)
	require.NoError(t, os.Chmod(dir, 0o777))
	bin := copyExecutable(t, os.Getenv(BinaryEnv), filepath.Join(dir, "shellsup"))
	self := copyExecutable(t, os.Args[0], filepath.Join(dir, "harness.test"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", self)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", BinaryEnv + "=" + bin, "DIR=" + dir, helpers.Env("dumpable-harness")}
	out, err := cmd.Output()
	require.NoError(t, err, "the harness: %s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rep dumpableReport
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &rep), "the harness said: %s", out)
	assert.Equal(t, CategoryProtocol, rep.Category, "a SIGKILLed shellsup is an error")
	assert.Equal(t, 0, rep.Dumpable, "the harness was made dumpable again")
	assert.Equal(t, "refused", rep.Verdict, "the survivor read /proc/<harness>/environ")
}
