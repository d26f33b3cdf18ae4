// Package protocol is shellsup's wire format: length-prefixed msgpack frames
// exchanged between shellsup and the process that runs it (README, "Frames mode").
//
// Every frame is a 4-byte big-endian length N (1 ≤ N ≤ MaxFrameSize) followed
// by N bytes holding one msgpack map with string keys and a string "type".
// The guarantee: Decoder never allocates a body larger than MaxFrameSize,
// never panics on hostile input, and reports every malformed frame as a
// *FrameError; Encoder only writes frames that Decoder accepts.
//
// The API has the shape of encoding/json: NewEncoder(w).Encode(f) and
// NewDecoder(r).Decode(&f). Unknown keys are ignored (forward
// compatibility); a frame of an unknown type decodes to *Unknown so callers
// can skip it. The package has no platform dependency and is shared by the
// shellsup binary and the Go binding, so the format is written down once.
package protocol
