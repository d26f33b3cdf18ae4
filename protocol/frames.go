package protocol

// Version is the protocol version carried by the start frame.
const Version = 1

// MaxFrameSize is the largest frame body, in bytes, either side may send.
const MaxFrameSize = 1 << 20

// Frame types, the value of every frame's "type" key.
const (
	TypeStart    = "start"
	TypeProgress = "progress"
	TypeTimeout  = "timeout"
	TypeCancel   = "cancel"
	TypeTotals   = "totals"
	TypeError    = "error"
	TypePorts    = "ports"
)

// Cancel reasons carried by a shellsup → parent cancel frame.
const (
	ReasonRequest    = "request"     // the parent sent a cancel frame
	ReasonSignal     = "signal"      // SIGTERM, SIGINT or SIGHUP reached shellsup
	ReasonParentGone = "parent-gone" // control channel EOF, EPIPE on output, or the parent died
	ReasonProtocol   = "protocol"    // a malformed or oversized control frame
)

// Triggers carried by totals.cleanup.trigger: what ended the run.
const (
	TriggerExit    = "exit"    // bash exited
	TriggerTimeout = "timeout" // the timeout fired first
	TriggerCancel  = "cancel"  // a cancel came first
)

// Error categories carried by the error frame (README, "Frames mode").
const (
	CategoryValidation             = "validation"
	CategoryContainmentUnavailable = "containment_unavailable"
	CategoryExecFailed             = "exec_failed"
	CategoryInternal               = "internal"
)

// Frame is one message of the protocol. Type returns the frame's "type" key.
type Frame interface {
	Type() string
}

// Start is sent first, once the command is running.
type Start struct {
	Version     int     `msgpack:"version"`
	Pid         int     `msgpack:"pid"`      // shellsup's pid
	ChildPid    int     `msgpack:"childPid"` // bash's pid
	Command     string  `msgpack:"command"`
	Cwd         string  `msgpack:"cwd"`
	Timeout     float64 `msgpack:"timeout"` // seconds
	Budget      int     `msgpack:"budget"`
	Containment string  `msgpack:"containment"` // the tier guarding this run, e.g. "subreaper"
	Capture     string  `msgpack:"capture"`     // "head", "tail" or "head+tail"
	Lifetime    float64 `msgpack:"lifetime"`    // a job's lifetime in seconds, 0 for a call with a timeout
	Spill       string  `msgpack:"spill"`       // the run's spill directory, "" without --spill
	Login       bool    `msgpack:"login"`       // bash -lc (true) or bash --norc -c (--no-login)
	Tidy        bool    `msgpack:"tidy"`        // --tidy: the captured text is tidied
	// Cgroup is the run's leaf cgroup v2 directory in the cgroup tier (a
	// caller that sees shellsup die without totals writes 1 to its
	// cgroup.kill); absent otherwise.
	Cgroup string `msgpack:"cgroup,omitempty"`
	// User is who the command runs as under --user; absent otherwise (the
	// command then runs as shellsup's own user).
	User *RunAs `msgpack:"user,omitempty"`
	// Sandbox is what the sandbox enforces (--sandbox, --no-network);
	// absent without one.
	Sandbox *Sandbox `msgpack:"sandbox,omitempty"`
}

// Sandbox is what the sandbox enforces for the run (docs/sandbox.md).
type Sandbox struct {
	Mode     string   `msgpack:"mode"`             // "read-only", "workspace-write" or "none"
	Writable []string `msgpack:"writable"`         // where the command may write; empty without filesystem rules
	Network  string   `msgpack:"network"`          // "host", "loopback" (own namespace) or "none" (no TCP)
	Via      string   `msgpack:"via"`              // the mechanisms, "+"-joined: "landlock", "netns", "landlock-tcp"
	TmpDir   string   `msgpack:"tmpDir,omitempty"` // the private TMPDIR, removed at cleanup
}

// RunAs is the user and groups the command runs as (--user), with no
// capabilities and no_new_privs.
type RunAs struct {
	Name   string   `msgpack:"name"` // the passwd name, or the uid in decimal without an entry
	Uid    uint32   `msgpack:"uid"`
	Gid    uint32   `msgpack:"gid"`
	Group  string   `msgpack:"group"`  // the group's name, or the gid in decimal
	Groups []uint32 `msgpack:"groups"` // the supplementary groups; empty with an explicit group
	Home   string   `msgpack:"home"`   // HOME as the command gets it
}

// Progress carries captured text of one stream, in capture order. Joining a
// stream's progress texts gives exactly that stream's captured text.
type Progress struct {
	Stream string `msgpack:"stream"` // "stdout" or "stderr"
	Text   string `msgpack:"text"`
}

// Timeout is sent when the deadline fired, before cleanup starts.
type Timeout struct {
	Timeout float64 `msgpack:"timeout"` // seconds
}

// Cancel flows both ways. From the parent it asks shellsup to cancel the run
// and Reason is empty (omitted on the wire). From shellsup it says
// cancellation began, before cleanup, and Reason is one of the Reason
// constants.
type Cancel struct {
	Reason string `msgpack:"reason,omitempty"`
}

// Result holds the 13 result keys (README, "Frames mode"), the keys of
// the shell.run skill that shellsup replaces.
type Result struct {
	Command       string  `msgpack:"command"`
	Cwd           string  `msgpack:"cwd"`
	Stdout        string  `msgpack:"stdout"`
	Stderr        string  `msgpack:"stderr"`
	ExitCode      *int    `msgpack:"exitCode"` // nil only if bash's status was never learned (a straggling bash)
	Signal        *string `msgpack:"signal"`   // e.g. "SIGKILL" when a signal ended bash, else nil
	Cancelled     bool    `msgpack:"cancelled"`
	TimedOut      bool    `msgpack:"timedOut"`
	Truncated     bool    `msgpack:"truncated"`
	TotalBytes    int64   `msgpack:"totalBytes"`
	CapturedBytes int64   `msgpack:"capturedBytes"`
	ProgressBytes int64   `msgpack:"progressBytes"`
	DurationMs    int64   `msgpack:"durationMs"`
}

// Straggler is a process that cleanup could not remove before its deadline.
type Straggler struct {
	Pid    int    `msgpack:"pid"`
	Comm   string `msgpack:"comm"`
	State  string `msgpack:"state"`  // the /proc state letter, e.g. "D"
	Reason string `msgpack:"reason"` // why it survived, e.g. "uninterruptible sleep (D state)"
}

// Cleanup reports what the cleanup did. It is the extra key of the totals
// frame, beside the 13 result keys.
type Cleanup struct {
	Tier       string      `msgpack:"tier"`       // the containment tier used, as in Start.Containment
	Trigger    string      `msgpack:"trigger"`    // what ended the run: TriggerExit, TriggerTimeout or TriggerCancel
	Signalled  int         `msgpack:"signalled"`  // distinct processes sent SIGTERM or SIGKILL
	Killed     int         `msgpack:"killed"`     // distinct processes sent SIGKILL
	Reaped     int         `msgpack:"reaped"`     // children reaped by shellsup, bash included
	Rounds     int         `msgpack:"rounds"`     // enumeration passes over /proc
	Stragglers []Straggler `msgpack:"stragglers"` // empty when nothing survived; at most 100
	// StragglersOmitted counts stragglers beyond the 100 listed.
	StragglersOmitted int   `msgpack:"stragglersOmitted"`
	Ms                int64 `msgpack:"ms"`            // time spent in cleanup
	DrainTimedOut     bool  `msgpack:"drainTimedOut"` // a pipe was still held open after the tree was gone
	// PidsLimitHit counts forks refused at --max-procs (pids.events max);
	// OOMKills counts processes the kernel killed at --max-memory
	// (memory.events oom_kill). Present only when non-zero.
	PidsLimitHit int64 `msgpack:"pidsLimitHit,omitempty"`
	OOMKills     int64 `msgpack:"oomKills,omitempty"`
	// Tampered names the leaf's limit files ("pids.max", "memory.max",
	// …) written or changed after shellsup set them, by a command running
	// as shellsup's own uid; absent when none was.
	Tampered []string `msgpack:"tampered,omitempty"`
	// LeafLeft is a leaf cgroup left in place for the next sweep (a
	// process still pinned it, or the sub-cgroups the command made were
	// not all removed by the cleanup's deadline); absent when none was.
	LeafLeft string `msgpack:"leafLeft,omitempty"`
	// TmpRemoved counts the entries of the sandbox's private TMPDIR the
	// cleanup removed (the directory included); TmpLeft names it if it
	// could not be removed. Both absent without a private TMPDIR.
	TmpRemoved int    `msgpack:"tmpRemoved,omitempty"`
	TmpLeft    string `msgpack:"tmpLeft,omitempty"`
}

// Totals is the last frame of every run that started, sent exactly once.
type Totals struct {
	Result
	// CancelReason is the reason of the cancel frame, or "" when the run was
	// not cancelled. An addition to the 13 keys.
	CancelReason string  `msgpack:"cancelReason"`
	Cleanup      Cleanup `msgpack:"cleanup"`
	// StdoutBytes and StderrBytes are the raw bytes read from each pipe
	// (together TotalBytes).
	StdoutBytes int64  `msgpack:"stdoutBytes"`
	StderrBytes int64  `msgpack:"stderrBytes"`
	Redactions  int    `msgpack:"redactions"` // secrets replaced (--redact), 0 without it
	Capture     string `msgpack:"capture"`    // the capture mode: "head", "tail" or "head+tail"
	// LeftOut is the text bytes a tail or head+tail capture left out
	// (named by its marker); 0 for a head capture.
	LeftOut int64    `msgpack:"leftOut"`
	Spill   *Spill   `msgpack:"spill,omitempty"`   // only with --spill
	User    *RunAs   `msgpack:"user,omitempty"`    // only with --user, as in Start
	Sandbox *Sandbox `msgpack:"sandbox,omitempty"` // only with a sandbox, as in Start
	// Status is how the run ended, one of the Status words (status.go).
	Status string `msgpack:"status,omitempty"`
	// StreamText is what became of each stream's bytes: lossy, binary, tidied.
	StreamText
	// InteractiveTotals: idle, needsInput, prompt (docs/interactive.md).
	InteractiveTotals
}

// StreamText is, per stream, what became of the raw bytes on their way to text: inlined in
// Totals. Lossy and binary describe the bytes shellsup decoded (all of a stream, except what a
// head capture drains past its budget without decoding, and what follows the binary verdict
// under --tidy).
type StreamText struct {
	// StdoutLossyBytes and StderrLossyBytes are the raw bytes that became U+FFFD.
	StdoutLossyBytes int64 `msgpack:"stdoutLossyBytes"`
	StderrLossyBytes int64 `msgpack:"stderrLossyBytes"`
	// StdoutBinary and StderrBinary say the stream is binary: a NUL byte, or more than 10% of
	// 8 KiB (819 bytes) of its first 8 KiB lost to U+FFFD.
	StdoutBinary bool `msgpack:"stdoutBinary"`
	StderrBinary bool `msgpack:"stderrBinary"`
	// StdoutTidiedBytes and StderrTidiedBytes are, with --tidy, the UTF-8 bytes of decoded text
	// the tidier took out (escape sequences, controls, redrawn states, folded copies) less those
	// it put in (fold lines, a binary line); 0 without --tidy.
	StdoutTidiedBytes int64 `msgpack:"stdoutTidiedBytes"`
	StderrTidiedBytes int64 `msgpack:"stderrTidiedBytes"`
}

// Spill names a run's spill files and what they hold.
type Spill struct {
	Dir           string `msgpack:"dir"`
	Stdout        string `msgpack:"stdout"` // path of the stdout file
	Stderr        string `msgpack:"stderr"`
	StdoutWritten int64  `msgpack:"stdoutWritten"` // bytes in the file
	StderrWritten int64  `msgpack:"stderrWritten"`
	StdoutDropped int64  `msgpack:"stdoutDropped"` // bytes past --spill-max (or after a write error)
	StderrDropped int64  `msgpack:"stderrDropped"`
	Cut           bool   `msgpack:"cut"` // some bytes were dropped
}

// Ports flows both ways. From the parent it is a query: which ports the
// command's process tree is listening on (in shellsup's network
// namespace). A query whose ports list entries asks only about their port
// numbers (only "port" is read; WaitFor's query names the one port it waits
// for), an empty or absent list about every port. shellsup answers with a
// Ports frame listing them (an empty list when none), at any time before
// totals: one entry per proto/addr/port, sorted by port, at most MaxPorts;
// Omitted counts those left out past that.
type Ports struct {
	Ports []Port `msgpack:"ports"`
	// Omitted counts the listeners left out of an answer past MaxPorts
	// (the highest ports). Present only when non-zero.
	Omitted int `msgpack:"omitted,omitempty"`
}

// MaxPorts is the most entries a ports answer lists, so that the frame
// stays far under MaxFrameSize (an entry encodes to at most 75 bytes).
const MaxPorts = 4096

// Port is one listening socket of the tree.
type Port struct {
	Proto string `msgpack:"proto"` // "tcp", "tcp6", "udp" or "udp6"
	Addr  string `msgpack:"addr"`  // the local address, e.g. "127.0.0.1" or "::"
	Port  int    `msgpack:"port"`
	Pid   int    `msgpack:"pid"` // a process of the tree holding the socket
}

// Error is sent instead of start and totals when the run cannot happen.
type Error struct {
	Category string `msgpack:"category"`
	Message  string `msgpack:"message"`
	Status   string `msgpack:"status,omitempty"` // StatusFailed from shellsup; absent from older writers
}

// Unknown is what Decoder returns for a well-formed frame whose type this
// version does not know. Callers skip it.
type Unknown struct {
	FrameType string
}

func (*Start) Type() string     { return TypeStart }
func (*Progress) Type() string  { return TypeProgress }
func (*Timeout) Type() string   { return TypeTimeout }
func (*Cancel) Type() string    { return TypeCancel }
func (*Totals) Type() string    { return TypeTotals }
func (*Error) Type() string     { return TypeError }
func (*Ports) Type() string     { return TypePorts }
func (u *Unknown) Type() string { return u.FrameType }

// newFrame returns an empty frame of the given type, or nil if the type is
// unknown.
func newFrame(typ string) Frame {
	switch typ {
	case TypeStart:
		return new(Start)
	case TypeProgress:
		return new(Progress)
	case TypeTimeout:
		return new(Timeout)
	case TypeCancel:
		return new(Cancel)
	case TypeTotals:
		return new(Totals)
	case TypeError:
		return new(Error)
	case TypePorts:
		return new(Ports)
	}
	return newInteractiveFrame(typ)
}
