// Command pydiff feeds cases through the real capture path (one [decoder.Capture] with its budget
// and marker, written to with WriteFunc, closed with CloseFunc, and only counted with Discard once
// it is spent, as shellsup's readers do) and writes back what was captured, so that
// testdata/fuzz_python.py can compare it with Python's own bytes.decode("utf-8", "replace")
// (make fuzz-python).
//
// The protocol on stdin and stdout is little-endian and batched, so that the side writing a batch
// never blocks on the side reading it:
//
//	batch    := u32 ncases, then ncases cases
//	case     := u32 budget, u32 nops, then nops ops
//	op       := u8 kind (0 write stdout, 1 write stderr, 2 close stdout, 3 close stderr),
//	            then for a write: u32 len, len bytes
//	reply    := u32 len, stdout text; u32 len, stderr text; u8 truncated;
//	            u64 totalBytes; u64 capturedBytes; u32 len, error text ("" when consistent)
//
// All replies of a batch are written after the whole batch is read. EOF on stdin ends the program.
// Built with -tags plantbug, the driver drops the U+FFFD that closing stdout adds for a sequence
// left incomplete, to prove the differential check catches such a bug.
package main
