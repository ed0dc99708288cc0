package cluster

import "testing"

// TestPinnedVersion reads the version an alias pins, so that the
// installed suites are recognized and npm ci does not run every time.
func TestPinnedVersion(t *testing.T) {
	for spec, want := range map[string]string{"0.1.16": "0.1.16", "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12": "0.2.0-alpha.12"} {
		if got := PinnedVersion(spec); got != want {
			t.Errorf("%s: %q, want %q", spec, got, want)
		}
	}
	if err := EnsureNodeDeps(".."); err != nil {
		t.Fatal(err)
	}
	if !installed("..", map[string]string{"conformance-next": "npm:@modelcontextprotocol/conformance@0.2.0-alpha.12"}) {
		t.Error("the installed alias is not recognized")
	}
}
