package mcpgate_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TestNewOrderedID checks that ordered IDs keep the form of other IDs, the
// first 14 hex digits the time in microseconds, so that IDs of later
// times sort after earlier ones (which keeps inserts at the end of an
// index); that IDs of one microsecond differ; and that a call ID is one
// of them, made in one allocation (without the race detector, which moves
// the random bytes' array to the heap).
func TestNewOrderedID(t *testing.T) {
	form := regexp.MustCompile(`^msg_[0-9a-f]{24}$`)
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	prev := ""
	for i := range 1000 {
		ti := at.Add(time.Duration(i) * time.Microsecond)
		id := mcpgate.NewOrderedID("msg_", ti)
		if !form.MatchString(id) || id <= prev {
			t.Fatalf("ID %d: %q after %q", i, id, prev)
		}
		if got, err := strconv.ParseUint(id[4:18], 16, 64); err != nil || got != uint64(ti.UnixMicro()) {
			t.Fatalf("ID %q starts with %x, want the time %x", id, got, ti.UnixMicro())
		}
		prev = id
	}
	if a, b := mcpgate.NewOrderedID("msg_", at), mcpgate.NewOrderedID("msg_", at); a == b {
		t.Error("two IDs of one microsecond are equal")
	}
	if id := mcpgate.NewCallID(at); !regexp.MustCompile(`^call_[0-9a-f]{24}$`).MatchString(id) {
		t.Errorf("NewCallID = %q, want call_ and 24 hex digits", id)
	}
	if n := testing.AllocsPerRun(100, func() { mcpgate.NewCallID(at) }); n != 1 && !raceEnabled {
		t.Errorf("NewCallID made %v allocations, want 1", n)
	}
}
