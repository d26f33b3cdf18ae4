package request

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDeadlineFlagAndRule(t *testing.T) {
	call := Deadline{Kind: KindTimeout, Seconds: 1.5}
	job := Deadline{Kind: KindLifetime, Seconds: 3600}
	assert.Equal(t, "--timeout=1.5", call.Flag())
	assert.Equal(t, "--lifetime=3600", job.Flag())
	assert.Equal(t, 1500*time.Millisecond, call.Duration())
	assert.NoError(t, job.Validate("1h"))
	assert.ErrorContains(t, Deadline{Kind: KindTimeout, Seconds: 3600}.Validate("1h"), "timeout must be")
	assert.ErrorContains(t, Deadline{Kind: KindLifetime, Seconds: MaxLifetime + 1}.Validate("8d"), "lifetime must be")
}
