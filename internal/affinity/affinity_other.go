//go:build !linux

package affinity

// Hold holds nothing elsewhere than Linux; release does nothing.
func Hold() (release func()) { return func() {} }
