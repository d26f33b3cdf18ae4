//go:build proctestunused

package proctest

// The negative control (see TestUnusedHelperFailsTheSuite): a helper that
// is registered and never started must fail a full run.
const negativeControl = true

func init() { helpers.Register("never-used", func([]string) int { return 0 }) }
