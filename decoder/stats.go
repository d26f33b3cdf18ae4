package decoder

// SniffBytes is how much of the start of a stream decides whether it is binary by its invalid
// bytes.
const SniffBytes = 8192

// Stats is what a [Decoder] has seen of its stream's raw bytes.
type Stats struct {
	Bytes int64 // raw bytes given to Decode
	Lossy int64 // raw bytes that became U+FFFD (a maximal subpart of n bytes counts n)
	NUL   bool  // a NUL byte was among them
	head  int64 // lossy bytes of the subparts that start within the first SniffBytes
}

// lost counts the n raw bytes of a subpart at stream offset at, replaced by U+FFFD.
func (s *Stats) lost(at int64, n int) {
	s.Lossy += int64(n)
	if at < SniffBytes {
		s.head += int64(n)
	}
}

// Binary reports whether the bytes seen so far look binary: a NUL byte, or more than 10% of
// [SniffBytes] (819 bytes) of the first SniffBytes lost to U+FFFD. A stream shorter than that is
// binary only by a NUL: a few Latin-1 letters in a short text do not make it binary.
func (s Stats) Binary() bool {
	return s.NUL || s.head*10 > SniffBytes
}

// Verdict is Binary, and whether it is final for the lossy test (the first SniffBytes have been
// seen, or it is already true). A stream that is not binary becomes binary later only at a NUL.
func (s Stats) Verdict() (binary, final bool) {
	b := s.Binary()
	return b, b || s.Bytes >= SniffBytes
}

// Suspect reports whether some of the first SniffBytes were lost to U+FFFD.
func (s Stats) Suspect() bool { return s.head > 0 }

// Stats returns what d has seen so far.
func (d *Decoder) Stats() Stats { return d.stats }
