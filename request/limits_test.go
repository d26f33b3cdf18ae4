package request_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shellsup/shellsup/request"
)

// limitsFile is the bridge the Python binding's tests read: the limits as
// numbers, compared here with the Go constants and there with Python's.
type limitsFile struct {
	Timeout struct {
		Default float64 `json:"default"`
		Max     float64 `json:"max"`
	} `json:"timeout"`
	Grace struct {
		Default float64 `json:"default"`
		Min     float64 `json:"min"`
		Max     float64 `json:"max"`
	} `json:"grace"`
	Budget struct {
		Default int `json:"default"`
		Min     int `json:"min"`
		Max     int `json:"max"`
	} `json:"budget"`
	CommandMaxBytes int `json:"commandMaxBytes"`
	MaxProcs        struct {
		Min int64 `json:"min"`
		Max int64 `json:"max"`
	} `json:"maxProcs"`
	MaxMemory struct {
		Min int64 `json:"min"`
	} `json:"maxMemory"`
	Lifetime struct {
		Default float64 `json:"default"`
		Max     float64 `json:"max"`
	} `json:"lifetime"`
	SpillMax struct {
		Default int64 `json:"default"`
		Min     int64 `json:"min"`
	} `json:"spillMax"`
	ByteCountMax int64 `json:"byteCountMax"`
	Cleanup      struct {
		KillSeconds      float64 `json:"killSeconds"`
		LandingSeconds   float64 `json:"landingSeconds"`
		DrainSeconds     float64 `json:"drainSeconds"`
		GoneFlushSeconds float64 `json:"goneFlushSeconds"`
	} `json:"cleanup"`
}

func TestLimitsFileEqualsConstants(t *testing.T) {
	raw, err := os.ReadFile("../testdata/limits.json")
	require.NoError(t, err)
	var got limitsFile
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, request.DefaultTimeout, got.Timeout.Default, "timeout.default")
	assert.Equal(t, request.MaxTimeout, got.Timeout.Max, "timeout.max")
	assert.Equal(t, request.DefaultGrace, got.Grace.Default, "grace.default")
	assert.Equal(t, request.MinGrace, got.Grace.Min, "grace.min")
	assert.Equal(t, request.MaxGrace, got.Grace.Max, "grace.max")
	assert.Equal(t, request.DefaultBudget, got.Budget.Default, "budget.default")
	assert.Equal(t, request.MinBudget, got.Budget.Min, "budget.min")
	assert.Equal(t, request.MaxBudget, got.Budget.Max, "budget.max")
	assert.Equal(t, request.MaxCommandBytes, got.CommandMaxBytes, "commandMaxBytes")
	assert.EqualValues(t, request.MinProcs, got.MaxProcs.Min, "maxProcs.min")
	assert.EqualValues(t, request.MaxProcs, got.MaxProcs.Max, "maxProcs.max")
	assert.EqualValues(t, request.MinMemory, got.MaxMemory.Min, "maxMemory.min")
	assert.Equal(t, request.DefaultLifetime, got.Lifetime.Default, "lifetime.default")
	assert.Equal(t, request.MaxLifetime, got.Lifetime.Max, "lifetime.max")
	assert.EqualValues(t, request.DefaultSpillMax, got.SpillMax.Default, "spillMax.default")
	assert.EqualValues(t, request.MinSpillMax, got.SpillMax.Min, "spillMax.min")
	assert.EqualValues(t, request.MaxByteCount, got.ByteCountMax, "byteCountMax")
	assert.Equal(t, request.CleanupKill.Seconds(), got.Cleanup.KillSeconds, "cleanup.killSeconds")
	assert.Equal(t, request.CleanupLanding.Seconds(), got.Cleanup.LandingSeconds, "cleanup.landingSeconds")
	assert.Equal(t, request.CleanupDrain.Seconds(), got.Cleanup.DrainSeconds, "cleanup.drainSeconds")
	assert.Equal(t, request.CleanupGoneFlush.Seconds(), got.Cleanup.GoneFlushSeconds, "cleanup.goneFlushSeconds")
}
