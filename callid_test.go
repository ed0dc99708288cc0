package mcpgate_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TestNewCallID checks that call IDs keep the form of other IDs, differ
// within one microsecond, and sort in the order of their calls' times,
// which keeps inserts at the end of the primary key's index.
func TestNewCallID(t *testing.T) {
	form := regexp.MustCompile(`^call_[0-9a-f]{24}$`)
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	prev := ""
	for i := range 1000 {
		id := mcpgate.NewCallID(at.Add(time.Duration(i) * time.Microsecond))
		if !form.MatchString(id) || id <= prev {
			t.Fatalf("ID %d: %q after %q", i, id, prev)
		}
		prev = id
	}
	if a, b := mcpgate.NewCallID(at), mcpgate.NewCallID(at); a == b {
		t.Error("two IDs of one microsecond are equal")
	}
}
