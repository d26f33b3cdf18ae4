package shellsup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/request"
)

// TestValidation: every bad field is refused before anything is spawned
// (Binary is a script that would leave a file behind), with a validation
// *Error that quotes the value.
func TestValidation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tooLong := strings.Repeat("x", request.MaxCommandBytes+1)
	for _, tc := range []struct {
		name string
		edit func(*Request)
		want []string
	}{
		{"empty command", func(r *Request) { r.Command = "" }, []string{`command must be a non-empty string (got "")`}},
		{"command one byte over 128 KiB", func(r *Request) { r.Command = tooLong },
			[]string{"command is 131072 bytes", "at most 131072 bytes (128 KiB, MAX_ARG_STRLEN, with the NUL)"}},
		{"command not UTF-8", func(r *Request) { r.Command = "echo \xff" }, []string{`valid UTF-8 (got "echo \xff")`}},
		{"command with NUL", func(r *Request) { r.Command = "echo a\x00b" }, []string{`NUL byte (found at byte 6 of "echo a\x00b")`}},
		{"timeout negative", func(r *Request) { r.Timeout = -time.Second }, []string{"timeout must be greater than 0 and at most 600 seconds (got -1s)"}},
		{"timeout over 600 s", func(r *Request) { r.Timeout = 601 * time.Second }, []string{"(got 10m1s)"}},
		{"timeout 600 s + 1 ns", func(r *Request) { r.Timeout = 600*time.Second + 1 }, []string{"(got 10m0.000000001s)"}},
		{"grace negative", func(r *Request) { r.Grace = new(-time.Nanosecond) }, []string{"grace must be at least 0 and at most 60 seconds (got -1ns)"}},
		{"grace over 60 s", func(r *Request) { r.Grace = new(61 * time.Second) }, []string{"(got 1m1s)"}},
		{"budget negative", func(r *Request) { r.Budget = -1 }, []string{"budget must be at least 52 and at most 524288 bytes (got -1)"}},
		{"budget one under the marker", func(r *Request) { r.Budget = request.MinBudget - 1 }, []string{"(got 51)"}},
		{"budget one over 512 KiB", func(r *Request) { r.Budget = request.MaxBudget + 1 }, []string{"(got 524289)"}},
		{"cwd missing", func(r *Request) { r.Cwd = "/no/such/dir" }, []string{`cwd "/no/such/dir" does not exist`}},
		{"cwd a file", func(r *Request) { r.Cwd = file }, []string{"is not a directory", file}},
		{"cwd not UTF-8", func(r *Request) { r.Cwd = "/tmp/\xff" }, []string{`valid UTF-8 path without NUL bytes (got "/tmp/\xff")`}},
		{"env with NUL", func(r *Request) { r.Env = []string{"A=b\x00c"} }, []string{`env entry 0 must not contain a NUL byte (got "A=b\x00c")`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sentinel := filepath.Join(t.TempDir(), "spawned")
			req := newRequest(t, "true")
			req.Binary = writeScript(t, "touch "+sentinel)
			tc.edit(&req)
			res, err := Run(context.Background(), req)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, CategoryValidation, e.Category)
			assert.False(t, e.IsRetryable())
			var ve *request.ValidationError
			assert.ErrorAs(t, err, &ve)
			assert.True(t, strings.HasPrefix(err.Error(), "shellsup: validation: "), err.Error())
			for _, w := range tc.want {
				assert.Contains(t, e.Message, w)
			}
			assert.Zero(t, res)
			assert.NoFileExists(t, sentinel, "nothing may be spawned")
		})
	}
}

// The longest command the kernel accepts runs; one byte more is refused.
func TestCommandAtTheLimitRuns(t *testing.T) {
	command := "#" + strings.Repeat("x", request.MaxCommandBytes-len("#\necho ok")) + "\necho ok"
	require.Len(t, command, request.MaxCommandBytes)
	res, err := Run(context.Background(), newRequest(t, command))
	require.NoError(t, err)
	assert.Equal(t, "ok\n", res.Stdout)
	assert.Equal(t, command, res.Command)
}

func TestBudgetBoundsRun(t *testing.T) {
	for b, want := range map[int]string{
		request.MinBudget: "h" + request.Marker(request.MinBudget), // the marker plus one byte
		request.MaxBudget: "hi\n",
	} {
		req := newRequest(t, "echo hi")
		req.Budget = b
		res, err := Run(context.Background(), req)
		require.NoError(t, err, "budget %d", b)
		assert.Equal(t, want, res.Stdout)
	}
}

func TestMissingBinary(t *testing.T) {
	t.Run("Request.Binary", func(t *testing.T) {
		req := newRequest(t, "true")
		req.Binary = "/no/such/shellsup"
		_, err := Run(context.Background(), req)
		e := requireCategory(t, err, CategoryNotFound)
		assert.Contains(t, e.Message, `Request.Binary "/no/such/shellsup"`)
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("SHELLSUP_BIN is not a fallback to PATH", func(t *testing.T) {
		t.Setenv(BinaryEnv, "/no/such/shellsup")
		_, err := Run(context.Background(), newRequest(t, "true"))
		e := requireCategory(t, err, CategoryNotFound)
		assert.Contains(t, e.Message, `$SHELLSUP_BIN "/no/such/shellsup"`)
	})
	t.Run("PATH", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv(BinaryEnv, "")
		t.Setenv("PATH", dir)
		_, err := Run(context.Background(), newRequest(t, "true"))
		e := requireCategory(t, err, CategoryNotFound)
		assert.Contains(t, e.Message, "$SHELLSUP_BIN (not set); ")
		assert.Contains(t, e.Message, "\"shellsup\" in $PATH ("+dir+"): not found")
		assert.ErrorIs(t, err, exec.ErrNotFound)
	})
	t.Run("not executable", func(t *testing.T) {
		req := newRequest(t, "true")
		req.Binary = filepath.Join(t.TempDir(), "shellsup")
		require.NoError(t, os.WriteFile(req.Binary, nil, 0o644))
		_, err := Run(context.Background(), req)
		requireCategory(t, err, CategoryNotFound)
	})
	t.Run("found in PATH", func(t *testing.T) {
		bin := os.Getenv(BinaryEnv)
		t.Setenv(BinaryEnv, "")
		t.Setenv("PATH", filepath.Dir(bin)+":"+os.Getenv("PATH"))
		res, err := Run(context.Background(), newRequest(t, "echo found"))
		require.NoError(t, err)
		assert.Equal(t, "found\n", res.Stdout)
	})
}

// A binary that is not shellsup breaks the protocol: a protocol error that
// says what happened, with shellsup's exit status and stderr.
func TestNotShellsup(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		req := newRequest(t, "true")
		req.Binary = writeScript(t, "echo 'something is wrong' >&2; exit 2")
		_, err := Run(context.Background(), req)
		e := requireCategory(t, err, CategoryProtocol)
		assert.Contains(t, e.Message, "ended before the start frame")
		assert.Contains(t, e.Message, "exit status 2")
		assert.Contains(t, e.Message, `its stderr: "something is wrong"`)
		assert.False(t, e.IsRetryable())
	})
	t.Run("garbage", func(t *testing.T) {
		shortSlack(t, 300*time.Millisecond)
		req := newRequest(t, "true")
		req.Grace = new(time.Duration(0))
		req.Binary = writeScript(t, "echo garbage; exec sleep 300")
		begin := time.Now()
		_, err := Run(context.Background(), req)
		requireCategory(t, err, CategoryProtocol)
		assert.ErrorIs(t, err, protocol.ErrTooLarge, `"garb" is a length over 1 MiB`)
		assert.Contains(t, err.Error(), "gave up on it: ", "after the grace plus slack of the cancel Run sent")
		assert.Less(t, time.Since(begin), bound, "killed after the grace plus slack")
	})
	t.Run("dies after start", func(t *testing.T) {
		start := filepath.Join(t.TempDir(), "start.bin")
		require.NoError(t, os.WriteFile(start, goldenWire(t, "start"), 0o644))
		req := newRequest(t, "true")
		req.Binary = writeScript(t, "cat "+start+"; kill -9 $$")
		_, err := Run(context.Background(), req)
		e := requireCategory(t, err, CategoryProtocol)
		assert.Contains(t, e.Message, "ended before the totals frame")
		assert.Contains(t, e.Message, "signal: killed")
	})
}

// shellsup's error frame becomes an *Error of its category.
func TestErrorFrame(t *testing.T) {
	frame := filepath.Join(t.TempDir(), "error.bin")
	require.NoError(t, os.WriteFile(frame, goldenWire(t, "error-containment"), 0o644))
	req := newRequest(t, "true")
	req.Binary = writeScript(t, "cat "+frame+"; exit 125")
	_, err := Run(context.Background(), req)
	e := requireCategory(t, err, CategoryContainmentUnavailable)
	assert.Equal(t, "/proc is not a mounted procfs", e.Message)
	assert.False(t, e.IsRetryable())
}

// The kernel refuses to exec shellsup with an environment over ARG_MAX.
func TestEnvironmentTooLarge(t *testing.T) {
	req := newRequest(t, "true")
	for i := range 64 {
		req.Env = append(req.Env, "BIG"+strings.Repeat("_", i)+"="+strings.Repeat("v", 100<<10))
	}
	_, err := Run(context.Background(), req)
	e := requireCategory(t, err, CategoryExecFailed)
	assert.ErrorIs(t, err, syscall.E2BIG)
	assert.Contains(t, e.Message, "argument list too long")
	assert.Contains(t, e.Message, "the command is 4 bytes, the environment")
	assert.Contains(t, e.Message, "in 68 entries")
}

func TestIsRetryable(t *testing.T) {
	for _, tc := range []struct {
		category string
		want     bool
	}{
		{CategoryValidation, false},
		{CategoryContainmentUnavailable, false},
		{CategoryExecFailed, false},
		{CategoryInternal, true},
		{CategoryNotFound, false},
		{CategoryProtocol, false},
		{"from-a-newer-shellsup", false},
	} {
		assert.Equal(t, tc.want, (&Error{Category: tc.category}).IsRetryable(), tc.category)
	}
	var nilErr *Error
	assert.False(t, nilErr.IsRetryable())
	assert.True(t, startError("/x", config{}, &os.PathError{Op: "fork/exec", Path: "/x", Err: syscall.EAGAIN}).IsRetryable(),
		"fork failing for lack of resources is worth a retry")
	assert.True(t, startError("/x", config{}, &os.PathError{Op: "fork/exec", Path: "/x", Err: syscall.ETXTBSY}).IsRetryable(),
		"a binary being written is worth a retry")
	assert.False(t, startError("/x", config{}, &os.PathError{Op: "fork/exec", Path: "/x", Err: syscall.EACCES}).IsRetryable())
}

func TestErrorsAs(t *testing.T) {
	_, err := Run(context.Background(), Request{Command: ""})
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, CategoryValidation, e.Category)
	assert.Equal(t, err, error(e))
}

func requireCategory(t *testing.T, err error, category string) *Error {
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, category, e.Category, "error: %v", err)
	require.True(t, strings.HasPrefix(err.Error(), "shellsup: "+category+": "), err.Error())
	return e
}
