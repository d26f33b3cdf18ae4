package request_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

// TestMinBudgetIsSmallestFit checks the constant against the rule it
// summarises: a budget holds its own marker plus one byte.
func TestMinBudgetIsSmallestFit(t *testing.T) {
	for b := -10; b < request.MinBudget; b++ {
		assert.False(t, request.BudgetFits(b), "budget %d", b)
	}
	assert.True(t, request.BudgetFits(request.MinBudget))
	assert.Equal(t, request.MinBudget, len(request.Marker(request.MinBudget))+1)
	assert.True(t, request.BudgetFits(request.MaxBudget))
	assert.False(t, request.BudgetFits(request.MaxBudget+1))
}

func TestValidators(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "" means accepted
	}{
		{"timeout 0", request.ValidateTimeout(0, "0"), "timeout must be greater than 0 and at most 600 seconds (got 0)"},
		{"timeout smallest", request.ValidateTimeout(math.SmallestNonzeroFloat64, "5e-324"), ""},
		{"timeout max", request.ValidateTimeout(request.MaxTimeout, "600"), ""},
		{"timeout max+", request.ValidateTimeout(math.Nextafter(request.MaxTimeout, 1000), "600.0000000000001"), "timeout must be greater than 0 and at most 600 seconds (got 600.0000000000001); a longer run is a job: give it a lifetime instead (--lifetime, lifetime=, Lifetime) of up to 604800 seconds (7 days)"},
		{"timeout NaN", request.ValidateTimeout(math.NaN(), "nan"), "timeout must be greater than 0 and at most 600 seconds (got nan)"},
		{"timeout +Inf", request.ValidateTimeout(math.Inf(1), "inf"), "timeout must be greater than 0 and at most 600 seconds (got inf); a longer run is a job: give it a lifetime instead (--lifetime, lifetime=, Lifetime) of up to 604800 seconds (7 days)"},
		{"grace 0", request.ValidateGrace(0, "0"), ""},
		{"grace max", request.ValidateGrace(request.MaxGrace, "60"), ""},
		{"grace -Inf", request.ValidateGrace(math.Inf(-1), "-inf"), "grace must be at least 0 and at most 60 seconds (got -inf)"},
		{"grace NaN", request.ValidateGrace(math.NaN(), "nan"), "grace must be at least 0 and at most 60 seconds (got nan)"},
		{"budget min-1", request.ValidateBudget(request.MinBudget-1, "51"), "budget must be at least 52 and at most 524288 bytes (got 51)"},
		{"budget max+1", request.ValidateBudget(request.MaxBudget+1, "524289"), "budget must be at least 52 and at most 524288 bytes (got 524289)"},
		{"budget default", request.ValidateBudget(request.DefaultBudget, "65536"), ""},
		{"timeout text", request.TimeoutNotADuration("abc"), `timeout must be a duration greater than 0 and at most 600 seconds, written as ` + request.DurationForm + ` (got "abc")`},
		{"grace text", request.GraceNotADuration("x"), `grace must be a duration at least 0 and at most 60 seconds, written as ` + request.DurationForm + ` (got "x")`},
		{"budget text", request.BudgetNotAByteCount("1.5"), `budget must be ` + request.ByteCountForm + `, at least 52 and at most 524288 bytes (got "1.5")`},
		{"command empty", request.ValidateCommand(""), `command must be a non-empty string (got "")`},
		{"command max", request.ValidateCommand(strings.Repeat("x", request.MaxCommandBytes)), ""},
		{"command max+1", request.ValidateCommand(strings.Repeat("x", request.MaxCommandBytes+1)), "command is 131072 bytes; the kernel passes at most 131072 bytes (128 KiB, MAX_ARG_STRLEN, with the NUL) in one argument"},
		{"command invalid UTF-8", request.ValidateCommand("echo \xff"), `command must be valid UTF-8 (got "echo \xff")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "" {
				require.NoError(t, tt.err)
				return
			}
			require.EqualError(t, tt.err, tt.want)
			var ve *request.ValidationError
			assert.True(t, errors.As(tt.err, &ve), "a *ValidationError: %T", tt.err)
		})
	}
}
