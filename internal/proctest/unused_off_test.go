//go:build !proctestunused

package proctest

// negativeControl is true only in the build that registers an unused
// helper (-tags proctestunused).
const negativeControl = false
