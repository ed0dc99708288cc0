package upstream

import (
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// FuzzToolNames checks that served tool names are valid with the prefix,
// unique within the skill, and depend only on the upstream names.
func FuzzToolNames(f *testing.F) {
	f.Add("p_", "get_weather\x00get weather\x00"+strings.Repeat("a", 70)+"\x00get_weather")
	f.Add("", "\x00\x00é\x00a.b-c")
	f.Add(strings.Repeat("x", 63), "a\x00b")
	f.Fuzz(func(t *testing.T, prefix, joined string) {
		if mcpgate.ValidToolName(prefix+"x") != nil || len(prefix) > mcpgate.MaxToolNameLen-12 {
			return // the skill's own validation refuses such a prefix
		}
		upstream := strings.Split(joined, "\x00")
		names := toolNames(prefix, upstream)
		again := toolNames(prefix, upstream)
		seen := map[string]bool{}
		for i, n := range names {
			if err := mcpgate.ValidToolName(mcpgate.ExposedName(prefix, n)); err != nil {
				t.Fatalf("upstream %q → %q: %v", upstream[i], n, err)
			}
			if seen[n] {
				t.Fatalf("name %q served twice for %q", n, upstream)
			}
			seen[n] = true
			if again[i] != n {
				t.Fatalf("upstream %q named %q, then %q", upstream[i], n, again[i])
			}
		}
	})
}
