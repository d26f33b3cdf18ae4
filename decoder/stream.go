package decoder

import "strconv"

// Stream names one of the command's two output pipes.
type Stream int

// The two streams a [Capture] shares its budget between.
const (
	Stdout Stream = iota
	Stderr
)

// String returns "stdout" or "stderr", the names the protocol uses.
func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return "Stream(" + strconv.Itoa(int(s)) + ")"
}
