package request

import (
	"strings"
	"time"
)

// DurationForm says, for messages, how a duration is written: every time
// option of the command line (--timeout, --grace, --lifetime) takes this
// one form.
const DurationForm = "a number of seconds (1.5) or a number with a unit ms, s, m, h or d (500ms, 2s, 1m, 1h30m, 7d)"

// ParseDuration reads a duration in seconds: a plain number of seconds
// ("1.5", "90"), or a number with a unit ms, s, m, h or d ("500ms", "2s",
// "1m", "1.5h", "7d"), or several such parts ("1h30m", Go's
// time.ParseDuration, which also reads us and ns). It is the one parser of
// the command line's durations; each option applies its own range. inf,
// nan and numbers too large for a float64 parse here (as plain seconds)
// and are refused by that range check. ok is false for any other text.
func ParseDuration(s string) (seconds float64, ok bool) {
	t := strings.TrimSpace(s)
	if v, ok := ParseSeconds(t); ok {
		return v, true
	}
	if days, found := strings.CutSuffix(t, "d"); found {
		v, ok := ParseSeconds(days)
		return v * 86400, ok && days != "" && isDecimal(days)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, false
	}
	return d.Seconds(), true
}

// isDecimal reports whether s is written in decimal digits with an
// optional sign and point ("1.5", "-2"): "7d" may not hide "infd" or "0x1p3d".
func isDecimal(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && s != "." && strings.Trim(s, "0123456789.") == "" && strings.Count(s, ".") <= 1
}
