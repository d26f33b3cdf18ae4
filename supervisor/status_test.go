package supervisor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/shellsup/shellsup/protocol"
)

// TestStatusWordOrder: when several endings apply, the first of failed,
// timeout, cancelled, oom, signaled, exited wins.
func TestStatusWordOrder(t *testing.T) {
	code := func(n int) *int { return &n }
	kill := "SIGKILL"
	oom := protocol.Cleanup{OOMKills: 1}
	rows := []struct {
		name  string
		t     protocol.Totals
		clean bool
		want  string
	}{
		{"exit 0", protocol.Totals{Result: protocol.Result{ExitCode: code(0)}}, true, protocol.StatusExited},
		{"exit 1", protocol.Totals{Result: protocol.Result{ExitCode: code(1)}}, true, protocol.StatusExited},
		{"signal", protocol.Totals{Result: protocol.Result{ExitCode: code(137), Signal: &kill}}, true, protocol.StatusSignaled},
		{"oom, bash exit 137", protocol.Totals{Result: protocol.Result{ExitCode: code(137)}, Cleanup: oom}, true, protocol.StatusOOM},
		{"oom, bash killed", protocol.Totals{Result: protocol.Result{ExitCode: code(137), Signal: &kill}, Cleanup: oom}, true, protocol.StatusOOM},
		{"oom, bash exit 0", protocol.Totals{Result: protocol.Result{ExitCode: code(0)}, Cleanup: oom}, true, protocol.StatusExited},
		{"timeout beats oom", protocol.Totals{Result: protocol.Result{ExitCode: code(143), TimedOut: true}, Cleanup: oom}, true, protocol.StatusTimeout},
		{"cancel beats signal", protocol.Totals{Result: protocol.Result{ExitCode: code(143), Signal: &kill, Cancelled: true}}, true, protocol.StatusCancelled},
		{"straggler beats timeout", protocol.Totals{Result: protocol.Result{ExitCode: code(0), TimedOut: true}}, false, protocol.StatusFailed},
		{"status unknown", protocol.Totals{Result: protocol.Result{Cancelled: true}}, true, protocol.StatusFailed},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			assert.Equal(t, row.want, statusWord(&row.t, row.clean))
		})
	}
}
