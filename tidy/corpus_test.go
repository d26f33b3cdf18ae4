package tidy

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellsup/shellsup/decoder"
)

var update = flag.Bool("update", false, "write the .want files of the corpus that have no oracle from the tidier")

const corpusDir = "../testdata/tidy"

// oracles are the corpus entries whose .want is the same tool's plain run
// (testdata/tidy/generate.sh), never written by -update.
var oracles = map[string]bool{"ls-color": true, "ls-hyperlink": true, "git-log": true}

// pipeline is what a stream's text goes through in shellsup: each read
// decoded, then tidied.
func pipeline(reads [][]byte) string {
	var d decoder.Decoder
	t := New(64 << 10)
	var out, text []byte
	for _, r := range reads {
		text = d.Decode(text[:0], r)
		out = t.Write(out, text)
	}
	out = t.Write(out, d.Flush(text[:0]))
	return string(t.Close(out))
}

func corpus(t *testing.T) []string {
	t.Helper()
	ins, err := filepath.Glob(filepath.Join(corpusDir, "*.in"))
	if err != nil || len(ins) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	return ins
}

// TestCorpus tidies every capture of the corpus in one read and wants its
// .want file.
func TestCorpus(t *testing.T) {
	for _, in := range corpus(t) {
		name := strings.TrimSuffix(filepath.Base(in), ".in")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := pipeline([][]byte{raw})
			wantPath := strings.TrimSuffix(in, ".in") + ".want"
			if *update && !oracles[name] {
				if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("tidied %s:\n got %q\nwant %q", name, got, want)
			}
		})
	}
}

// TestCorpusSplit feeds every capture in two reads split at every byte
// position, and in one-byte reads: the text is the same. A capture longer
// than 4 KiB is split at every position of its first 4 KiB (against that
// prefix's own text) and at every 127th of the whole, to keep the test
// quick under -race.
func TestCorpusSplit(t *testing.T) {
	const whole = 4 << 10
	for _, in := range corpus(t) {
		name := strings.TrimSuffix(filepath.Base(in), ".in")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			splitEverywhere(t, raw[:min(len(raw), whole)], 1)
			if len(raw) > whole {
				splitEverywhere(t, raw, 127)
			}
			want := pipeline([][]byte{raw})
			bytewise := make([][]byte, len(raw))
			for i := range raw {
				bytewise[i] = raw[i : i+1]
			}
			if got := pipeline(bytewise); got != want {
				t.Fatalf("one-byte reads: got %q, want %q", got, want)
			}
		})
	}
}

// splitEverywhere checks that raw split in two at every step-th position
// tidies as raw does in one read.
func splitEverywhere(t *testing.T, raw []byte, step int) {
	t.Helper()
	want := pipeline([][]byte{raw})
	for cut := 0; cut <= len(raw); cut += step {
		if got := pipeline([][]byte{raw[:cut], raw[cut:]}); got != want {
			t.Fatalf("split at %d (%q | %q): got %q, want %q", cut, raw[max(cut-20, 0):cut], raw[cut:min(cut+20, len(raw))], got, want)
		}
	}
}
