package request

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidateUser(t *testing.T) {
	for _, ok := range []string{"nobody", "65534", "nobody:nogroup", "0:0", "www-data", "user.name"} {
		assert.NoError(t, ValidateUser(ok), ok)
	}
	for spec, msg := range map[string]string{
		"":            `user must be USER or USER:GROUP, each a name or a numeric id (e.g. nobody, 65534, nobody:nogroup) (got "")`,
		":":           `(got ":")`,
		"nobody:":     `(got "nobody:")`,
		":nogroup":    `(got ":nogroup")`,
		"a:b:c":       `(got "a:b:c")`,
		"no body":     `without whitespace, control characters or NUL bytes (got "no body")`,
		"nobody\x00":  `(got "nobody\x00")`,
		"\xffnobody":  `(got "\xffnobody")`,
		"nobody\tx:y": `(got "nobody\tx:y")`,
	} {
		err := ValidateUser(spec)
		if assert.Error(t, err, "%q", spec) {
			assert.Contains(t, err.Error(), msg)
			assert.IsType(t, &ValidationError{}, err)
		}
	}
}
