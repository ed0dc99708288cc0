package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate"
)

func settingTests() []test {
	return []test{
		{"FirstClaimWins", testSettingFirstClaimWins},
		{"ClaimsAtOnce", testSettingClaimsAtOnce},
	}
}

// testSettingFirstClaimWins: a setting keeps the first value claimed; a
// later claim of another value returns the first, and names are apart.
func testSettingFirstClaimWins(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	for _, c := range []struct{ name, value, want string }{
		{"a", "one", "one"},
		{"a", "two", "one"},
		{"a", "one", "one"},
		{"b", "two", "two"},
	} {
		got, err := s.ClaimSetting(ctx, c.name, c.value)
		if err != nil || got != c.want {
			t.Fatalf("ClaimSetting(%q, %q) = %q, %v; want %q", c.name, c.value, got, err, c.want)
		}
	}
}

// testSettingClaimsAtOnce: of claims made at once with different values,
// every one returns the same value, one of those claimed.
func testSettingClaimsAtOnce(t *testing.T, s mcpgate.Store) {
	const n = 8
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v, err := s.ClaimSetting(context.Background(), "k", fmt.Sprint(i))
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] || v == "" {
			t.Fatalf("claims at once returned %q", got)
		}
	}
}
