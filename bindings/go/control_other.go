//go:build !linux

package shellsup

import "time"

// controlRoom is never used: platformCheck fails first.
func (p *process) controlRoom(time.Duration) (bool, error) { return false, ErrUnsupported }
