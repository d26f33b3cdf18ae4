package supervisor

import (
	"fmt"
	"os"

	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/internal/procstat"
	"github.com/shellsup/shellsup/protocol"
	"github.com/shellsup/shellsup/redact"
	"github.com/shellsup/shellsup/spill"
)

// streams is where a run's output goes besides the capture: the spill
// files, the window of a tail or head+tail capture, the redactors, and in
// human mode shellsup's own stdout and stderr.
type streams struct {
	spill  *spill.Set    // nil without --spill
	window *sharedWindow // nil for a head capture
	pumps  [2]*pump
}

// openSpill creates the run's spill directory, DIR/shellsup-PID-STARTTIME,
// named after shellsup's own identity so no two runs share one.
func openSpill(cfg Config) (*spill.Set, error) {
	if cfg.SpillDir == "" {
		return nil, nil
	}
	self, err := procstat.Read("/proc", os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("reading shellsup's own start time to name the spill directory: %w", err)
	}
	return spill.Create(cfg.SpillDir, fmt.Sprintf("shellsup-%d-%d", self.Pid, self.Start), cfg.SpillMax)
}

// newStreams wires one pump per stream. In frames mode captured text goes
// to emit as progress; in human mode every raw byte goes to stdio instead
// (the redacted text, with --redact), unbounded, and onFail is called when
// that fails.
func newStreams(cfg Config, set *spill.Set, capture *decoder.Capture, emit func(decoder.Stream, string), stdio Stdio, onFail func()) *streams {
	st := &streams{spill: set}
	if cfg.Capture != decoder.Head {
		w, err := decoder.NewWindow(cfg.Capture, cfg.Budget)
		if err != nil {
			panic(fmt.Sprintf("capture %s with budget %d passed validation: %v", cfg.Capture, cfg.Budget, err))
		}
		st.window = &sharedWindow{w: w}
	}
	own := [2]*os.File{stdio.Stdout, stdio.Stderr}
	for s := range st.pumps {
		p := &pump{capture: capture, emit: emit}
		var fwd *forwarder
		if !cfg.Frames && own[s] != nil {
			fwd = newForwarder(own[s], onFail)
		}
		if cfg.Redacts || st.window != nil || cfg.Tidy {
			p.text = &textPath{window: st.window}
			if cfg.Tidy {
				p.text.tidy = newTidyPath(cfg.Budget)
			}
			if cfg.Redacts {
				p.text.red = redact.New(cfg.Redact)
				p.text.fwdText = fwd // secrets never reach the terminal either
				fwd = nil
			}
		}
		p.fwd = fwd
		if set != nil {
			p.spill = set.Files[s]
		}
		st.pumps[s] = p
	}
	return st
}

// redactions is how many secrets both streams' redactors replaced. Call
// it once the drain is over.
func (st *streams) redactions() int {
	n := 0
	for _, p := range st.pumps {
		if p.text != nil && p.text.red != nil {
			n += p.text.red.Count()
		}
	}
	return n
}

// closeSpill closes the spill files and describes them for totals; nil
// without --spill. Call it once the drain is over.
func (st *streams) closeSpill() *protocol.Spill {
	if st.spill == nil {
		return nil
	}
	_ = st.spill.Close() // a close error on a local file loses nothing written with write(2)
	out, errs := st.spill.Files[0].Stats(), st.spill.Files[1].Stats()
	return &protocol.Spill{
		Dir: st.spill.Dir, Stdout: out.Path, Stderr: errs.Path,
		StdoutWritten: out.Written, StderrWritten: errs.Written,
		StdoutDropped: out.Dropped, StderrDropped: errs.Dropped,
		Cut: out.Cut || errs.Cut,
	}
}

// removeSpill closes and removes the spill of a run that never started:
// the two empty files and their directory.
func (st *streams) removeSpill() {
	if st.spill == nil {
		return
	}
	_ = st.spill.Close() // empty files: nothing to lose
	for _, f := range st.spill.Files {
		_ = os.Remove(f.Path) // best effort: an empty file left behind harms nobody
	}
	_ = os.Remove(st.spill.Dir)
}
