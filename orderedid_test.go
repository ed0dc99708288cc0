package mcpgate

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestOrderedID: an ordered ID is the prefix and 24 hex digits, the first
// 11 of them the time in milliseconds, so that IDs of later milliseconds
// sort after earlier ones; IDs of one millisecond differ.
func TestOrderedID(t *testing.T) {
	form := regexp.MustCompile(`^msg_[0-9a-f]{24}$`)
	ms := uint64(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC).UnixMilli())
	prev := ""
	seen := map[string]bool{}
	for i := range uint64(600) {
		id := orderedID("msg_", ms+i/3)
		if !form.MatchString(id) {
			t.Fatalf("ID %q, want msg_ and 24 hex digits", id)
		}
		if got, err := strconv.ParseUint(id[4:15], 16, 64); err != nil || got != ms+i/3 {
			t.Fatalf("ID %q starts with %x, want the time %x", id, got, ms+i/3)
		}
		if i%3 == 0 && id <= prev {
			t.Errorf("ID %q of a later millisecond sorts before %q", id, prev)
		}
		if seen[id] {
			t.Fatalf("ID %q made twice", id)
		}
		seen[id], prev = true, id
	}
	if id := NewOrderedID("msg_"); !form.MatchString(id) {
		t.Errorf("NewOrderedID = %q, want msg_ and 24 hex digits", id)
	}
}
