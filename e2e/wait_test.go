package e2e

import (
	"strings"
	"testing"
	"time"
)

// waitFor polls get until its text contains want (a process's output
// arriving), failing after a generous bound.
func waitFor(t *testing.T, get func() string, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := get()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
