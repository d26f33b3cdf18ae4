package decoder

import (
	"errors"
	"fmt"
	"strconv"
)

const (
	// DefaultBudget is the capture budget, in UTF-8 bytes of text, when none is given.
	DefaultBudget = 65536

	// MaxBudget is the largest budget: the totals frame carries the whole capture and must fit
	// one 1 MiB frame.
	MaxBudget = 512 << 10

	// MinBudget is the smallest budget that holds its own marker plus one byte of text:
	// len(Marker(52)) is 51.
	MinBudget = 52
)

// ErrBudget is the sentinel that every budget validation error wraps.
var ErrBudget = errors.New("decoder: budget out of range")

// BudgetError reports a budget outside [MinBudget, MaxBudget]. It wraps [ErrBudget].
type BudgetError struct {
	Budget int // the rejected value
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("decoder: budget must be at least %d and at most %d bytes (got %d)",
		MinBudget, MaxBudget, e.Budget)
}

// Unwrap returns [ErrBudget].
func (e *BudgetError) Unwrap() error { return ErrBudget }

// Marker returns the text that ends a truncated capture:
// "\n... output truncated at B-byte capture limit ...\n" with B the budget in decimal.
func Marker(budget int) string {
	return "\n... output truncated at " + strconv.Itoa(budget) + "-byte capture limit ...\n"
}

// ValidateBudget returns a *[BudgetError] if b cannot hold its own marker plus one byte of text
// (b < len(Marker(b))+1, that is b < MinBudget) or exceeds [MaxBudget]; otherwise nil.
func ValidateBudget(b int) error {
	if b < len(Marker(b))+1 || b > MaxBudget {
		return &BudgetError{Budget: b}
	}
	return nil
}
