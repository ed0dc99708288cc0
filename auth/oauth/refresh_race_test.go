package oauth_test

import (
	"net/http"
	"sync"
	"testing"
)

// TestConcurrentRefresh uses one refresh token from many clients at once:
// at most one gets new tokens, and since the others count as a reuse the
// family is revoked, so that no token issued in the race keeps working.
func TestConcurrentRefresh(t *testing.T) {
	f := mustFixture(t, nil)
	c := f.mustRegister(t, "none")
	tok := f.mustTokens(t, c, f.agentURL("shop"), "shop")
	const n = 8
	got := make([]*tokenResponse, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = f.refresh(t, c, tok.RefreshToken)
		}()
	}
	wg.Wait()
	ok := 0
	for _, r := range got {
		switch {
		case r.status == http.StatusOK:
			ok++
			if status, body := f.callMCP(t, "shop", r.AccessToken); status != http.StatusUnauthorized {
				t.Errorf("access token issued in the race: %d %s, want 401", status, body)
			}
			f.refresh(t, c, r.RefreshToken).mustError(t, http.StatusBadRequest, "invalid_grant")
		default:
			r.mustError(t, http.StatusBadRequest, "invalid_grant")
		}
	}
	if ok > 1 {
		t.Errorf("%d refreshes succeeded, want at most 1", ok)
	}
	if status, body := f.callMCP(t, "shop", tok.AccessToken); status != http.StatusUnauthorized {
		t.Errorf("first access token after the reuse: %d %s, want 401", status, body)
	}
}
