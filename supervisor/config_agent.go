package supervisor

import (
	"github.com/shellsup/shellsup/decoder"
	"github.com/shellsup/shellsup/request"
)

// AgentCapture is the capture mode --agent chooses: the start and the end
// of a long output, where an agent finds what went wrong.
const AgentCapture = "head+tail"

// withAgent applies --agent, one switch for an agent harness's defaults:
// --agent-env, --scrub-env and --capture head+tail (and --tidy, which
// Validate sets on the Config: agentTidy), each unless the command line gave that
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
	if a.agentCapture() {
		a.Output.Capture = AgentCapture
	}
	return a
}

// agentCapture says whether --agent chooses the capture mode.
func (a Args) agentCapture() bool { return a.Agent && !a.Given["capture"] && a.Output.Capture == "" }

// checkAgentBudget refuses a budget too small for the head+tail window that
// --agent chooses, naming --agent and the way out. A budget that does not
// parse is left for validate to report.
func (a Args) checkAgentBudget() error {
	if !a.agentCapture() {
		return nil
	}
	budget := request.DefaultBudget
	if a.Budget != "" {
		var err error
		if budget, err = parseBudget(a.Budget); err != nil {
			return nil
		}
	}
	if min := decoder.MinWindowBudget(budget); budget < min {
		return invalid("budget must be at least %d bytes for --agent's capture head+tail (got %d); add --capture head for a smaller budget", min, budget)
	}
	return nil
}

// agentTidy says whether --agent turns on --tidy: unless --tidy was given.
func (a Args) agentTidy() bool { return a.Agent && !a.Given["tidy"] }
