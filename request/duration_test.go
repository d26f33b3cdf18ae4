package request

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// One parser for every time option: plain seconds, a unit, Go's compound
// form, days.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]float64{
		"2": 2, "1.5": 1.5, " 90 ": 90, "0": 0, "-1": -1, "1e3": 1000,
		"500ms": 0.5, "2s": 2, "1m": 60, "1.5h": 5400, "1h30m": 5400, "7d": 604800, "0.5d": 43200, "-2s": -2,
	} {
		got, ok := ParseDuration(in)
		assert.True(t, ok, in)
		assert.InDelta(t, want, got, 1e-9, in)
	}
	for _, in := range []string{"inf", "+inf", "1e999"} {
		got, ok := ParseDuration(in)
		assert.True(t, ok && math.IsInf(got, 1), "%s parses as +Inf, for the range check to refuse", in)
	}
	for _, in := range []string{"", " ", "abc", "s", "d", "1w", "2 s", "1x", "infd", "nand", "0x1p3d", "1..5d", ".d", "1s2"} {
		_, ok := ParseDuration(in)
		assert.False(t, ok, "%q", in)
	}
}
