package decoder_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/request"
)

func TestMarker(t *testing.T) {
	tests := []struct {
		name   string
		budget int
		want   string
	}{
		{"default budget is the 54-byte marker of the README", request.DefaultBudget,
			"\n... output truncated at 65536-byte capture limit ...\n"},
		{"smallest budget", request.MinBudget, "\n... output truncated at 52-byte capture limit ...\n"},
		{"largest budget", request.MaxBudget, "\n... output truncated at 524288-byte capture limit ...\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, request.Marker(tt.budget))
		})
	}
	assert.Len(t, request.Marker(request.DefaultBudget), 54)
}

// TestMinBudgetIsSmallestValid checks the constant against the rule it summarises: a budget must
// hold its own marker plus one byte.
func TestMinBudgetIsSmallestValid(t *testing.T) {
	for b := -10; b < request.MinBudget; b++ {
		require.Error(t, decoder.ValidateBudget(b), "budget %d", b)
	}
	require.NoError(t, decoder.ValidateBudget(request.MinBudget))
	assert.Equal(t, request.MinBudget, len(request.Marker(request.MinBudget))+1)
}

func TestValidateBudget(t *testing.T) {
	tests := []struct {
		name   string
		budget int
		ok     bool
	}{
		{"negative", -1, false},
		{"zero", 0, false},
		{"min-1 cannot hold marker plus one byte", request.MinBudget - 1, false},
		{"min", request.MinBudget, true},
		{"min+1", request.MinBudget + 1, true},
		{"default", request.DefaultBudget, true},
		{"max", request.MaxBudget, true},
		{"max+1 would not fit the totals frame", request.MaxBudget + 1, false},
		{"huge", 1 << 40, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decoder.ValidateBudget(tt.budget)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, decoder.ErrBudget)
			var be *decoder.BudgetError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, tt.budget, be.Budget)
			assert.Contains(t, err.Error(), "(got "+strconv.Itoa(tt.budget)+")")
		})
	}
}

func TestBudgetErrorMessage(t *testing.T) {
	assert.EqualError(t, decoder.ValidateBudget(0),
		"decoder: budget must be at least 52 and at most 524288 bytes (got 0)")
}

func TestNewCaptureRejectsBadBudget(t *testing.T) {
	c, err := decoder.NewCapture(request.MaxBudget + 1)
	assert.Nil(t, c)
	assert.True(t, errors.Is(err, decoder.ErrBudget), "got %v", err)
	assert.EqualError(t, err, "decoder: budget must be at least 52 and at most 524288 bytes (got 524289)")
}
