package request

import "strconv"

// Limits of the timeout and the grace, in seconds.
const (
	DefaultTimeout = 120.0 // seconds
	MaxTimeout     = 600.0 // seconds; the minimum is exclusive: a timeout is greater than 0
	DefaultGrace   = 2.0   // seconds, SIGTERM → SIGKILL at cleanup
	MinGrace       = 0.0   // seconds; no grace: SIGKILL follows SIGTERM at once
	MaxGrace       = 60.0  // seconds
)

// Limits of the capture budget, in UTF-8 bytes of text shared by stdout and
// stderr, marker included.
const (
	// DefaultBudget is the budget when none is given.
	DefaultBudget = 65536

	// MaxBudget is the largest budget: the totals frame carries the whole
	// capture and must fit one 1 MiB frame.
	MaxBudget = 512 << 10

	// MinBudget is the smallest budget that holds its own marker plus one
	// byte of text: len(Marker(52)) is 51. BudgetFits states the rule.
	MinBudget = 52
)

// MaxCommandBytes is the longest command the kernel passes as one argument:
// MAX_ARG_STRLEN is 131072 bytes including the NUL.
const MaxCommandBytes = 131071

// Marker returns the text that ends a truncated capture:
// "\n... output truncated at B-byte capture limit ...\n" with B the budget
// in decimal.
func Marker(budget int) string {
	return "\n... output truncated at " + strconv.Itoa(budget) + "-byte capture limit ...\n"
}

// BudgetFits reports whether a capture of budget bytes can hold its own
// marker plus one byte of text (budget ≥ len(Marker(budget))+1, that is
// budget ≥ MinBudget) and fits the totals frame (budget ≤ MaxBudget).
func BudgetFits(budget int) bool {
	return budget >= len(Marker(budget))+1 && budget <= MaxBudget
}
