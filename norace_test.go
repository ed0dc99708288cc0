//go:build !race

package mcpgate_test

// raceEnabled reports whether the tests run with the race detector, whose
// instrumentation moves some values to the heap.
const raceEnabled = false
