package mcp

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// cached returns the ids of the sessions the server keeps in memory,
// sorted, checking that its index by identity agrees.
func (h *harness) cached(tb testing.TB) []string {
	tb.Helper()
	h.srv.mu.RLock()
	defer h.srv.mu.RUnlock()
	n := 0
	for identity, byID := range h.srv.byIdentity {
		for id, ls := range byID {
			if h.srv.live[id] != ls || ls.identity != identity {
				tb.Errorf("session %s of %s is indexed but not cached", id, identity)
			}
		}
		n += len(byID)
	}
	if n != len(h.srv.live) {
		tb.Errorf("%d sessions cached, %d indexed by identity", len(h.srv.live), n)
	}
	return slices.Sorted(maps.Keys(h.srv.live))
}

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

func TestSessionsCappedPerIdentity(t *testing.T) {
	h := mustHarness(t, &Options{MaxSessionsPerIdentity: 3})
	var alice []string
	for range 3 {
		alice = append(alice, h.mustInit(t, "2025-11-25", nil))
		h.clock.advance(time.Second)
	}
	bob := h.mustInit(t, "2025-11-25", map[string]string{"X-Test-Identity": "bob"})
	h.mustRPC(t, alice[0], pingBody) // alice[1] is now the least recently used
	h.clock.advance(time.Second)
	alice = append(alice, h.mustInit(t, "2025-11-25", nil))
	diff(t, "cached after alice's 4th session", slices.Sorted(slices.Values([]string{alice[0], alice[2], alice[3], bob})), h.cached(t))
	if h.store.get(alice[1]).EndedAt != nil {
		t.Fatal("the evicted session was ended")
	}
	h.clock.advance(time.Second)
	if v := h.mustRPC(t, alice[1], pingBody); v["result"] == nil { // loaded again, evicting alice[2]
		t.Fatalf("evicted session: %v", v)
	}
	diff(t, "cached after using the evicted one", slices.Sorted(slices.Values([]string{alice[0], alice[1], alice[3], bob})), h.cached(t))
}

// TestSessionCapSparesBusySessions goes over the cap while every session
// of the identity serves a request, and back under it once they are idle.
func TestSessionCapSparesBusySessions(t *testing.T) {
	h := mustHarness(t, &Options{MaxSessionsPerIdentity: 1})
	started, release, done := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	h.gw.setTool("block", blockingTool(false, started, release, done))
	busy := h.mustInit(t, "2025-11-25", nil)
	replied := h.async(t, req{session: busy, body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}`})
	<-started
	h.clock.advance(time.Second)
	second := h.mustInit(t, "2025-11-25", nil)
	diff(t, "cached while busy", slices.Sorted(slices.Values([]string{busy, second})), h.cached(t))
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the busy session's call was canceled: %v", err)
	}
	resp := <-replied
	defer resp.Body.Close()
	if v := mustJSON(t, mustRead(t, resp)); v["result"] == nil {
		t.Fatalf("the busy session's call: %v", v)
	}
	h.clock.advance(time.Second)
	third := h.mustInit(t, "2025-11-25", nil)
	diff(t, "cached once idle", []string{third}, h.cached(t))
	if v := h.mustRPC(t, busy, pingBody); v["result"] == nil {
		t.Fatalf("evicted session: %v", v)
	}
}
