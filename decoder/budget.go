package decoder

import (
	"errors"
	"fmt"

	"github.com/shellsup/shellsup/request"
)

// ErrBudget is the sentinel that every budget validation error wraps.
var ErrBudget = errors.New("decoder: budget out of range")

// BudgetError reports a budget outside [request.MinBudget, request.MaxBudget]. It wraps
// [ErrBudget].
type BudgetError struct {
	Budget int // the rejected value
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("decoder: budget must be at least %d and at most %d bytes (got %d)",
		request.MinBudget, request.MaxBudget, e.Budget)
}

// Unwrap returns [ErrBudget].
func (e *BudgetError) Unwrap() error { return ErrBudget }

// ValidateBudget returns a *[BudgetError] if b cannot hold its own marker plus one byte of text
// or exceeds the largest budget ([request.BudgetFits]); otherwise nil.
func ValidateBudget(b int) error {
	if !request.BudgetFits(b) {
		return &BudgetError{Budget: b}
	}
	return nil
}
