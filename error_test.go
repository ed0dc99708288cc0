package mcpgate

import "testing"

// TestErrorCodeNilAllocs checks that asking for the code or message of no
// error allocates nothing: the access log and the audit stage ask on every
// call.
func TestErrorCodeNilAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { ErrorCode(nil); ErrorMessage(nil) }); n != 0 {
		t.Errorf("ErrorCode(nil), ErrorMessage(nil): %v allocations, want 0", n)
	}
}
