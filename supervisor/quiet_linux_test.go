package supervisor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLastLine: the prompt is the text after the last newline, the part a
// carriage return overwrote dropped, bounded.
func TestLastLine(t *testing.T) {
	var l lastLine
	l.add("first\nsecond\nNa")
	l.add("me? ")
	assert.Equal(t, "Name? ", l.get())
	l.add("\r\n>>> ")
	assert.Equal(t, ">>> ", l.get())
	l.add("\rPassword: ")
	assert.Equal(t, "Password: ", l.get())
	l.add("\n")
	assert.Equal(t, "", l.get())
	big := make([]byte, 3*maxPrompt)
	for i := range big {
		big[i] = 'x'
	}
	l.add(string(big))
	assert.Len(t, l.get(), maxPrompt)
}
