package proctime

import (
	"testing"
	"time"
)

// TestSelfGrowsWithWork checks that CPU spent in a loop shows in Self.
func TestSelfGrowsWithWork(t *testing.T) {
	start := Self()
	if start <= 0 {
		t.Fatalf("Self() = %v at start, want the CPU the test binary used so far", start)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	n := 0
	for time.Now().Before(deadline) {
		n++
	}
	if got := Self() - start; got <= 0 {
		t.Errorf("Self() grew by %v over a 50 ms busy loop (%d turns), want more than 0", got, n)
	}
}
