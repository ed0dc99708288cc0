//go:build race

package mcpclient

// raceEnabled reports whether the tests run with the race detector, under
// which sync.Pool drops what it is given at random.
const raceEnabled = true
