package supervisor

// AgentCapture is the capture mode --agent chooses: the start and the end
// of a long output, where an agent finds what went wrong.
const AgentCapture = "head+tail"

// withAgent applies --agent, one switch for an agent harness's defaults:
// --agent-env, --scrub-env and --capture head+tail (and --tidy, which
// Validate sets on the Config), each unless the command line gave that
// option itself (--agent --capture head, --agent --scrub-env=false). The
// shell stays a login shell: agents rely on the PATH that profiles set.
func (a Args) withAgent() Args {
	if !a.Agent {
		return a
	}
	if !a.Given["agent-env"] {
		a.AgentEnv = true
	}
	if !a.Given["scrub-env"] {
		a.ScrubEnv = true
	}
	if !a.Given["capture"] && a.Output.Capture == "" {
		a.Output.Capture = AgentCapture
	}
	return a
}

// agentTidy says whether --agent turns on --tidy: unless --tidy was given.
func (a Args) agentTidy() bool { return a.Agent && !a.Given["tidy"] }
