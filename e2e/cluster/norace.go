//go:build !race

package cluster

// RaceEnabled reports whether the tests run with the race detector, so that
// Build builds the binary with it too.
const RaceEnabled = false
