package agent

import "testing"

// TestSessionChannelCached: a session's calls after its first find their
// channel without reading it; a channel deleted meanwhile (with its agent)
// is opened anew and the call goes through.
func TestSessionChannelCached(t *testing.T) {
	bus := newFakeBus()
	b := New(&Options{Bus: bus, Channels: bus})
	sk := testSkill()
	first := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"1"}`, "sess1", alice))
	reads := bus.channelReads()
	if again := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"2"}`, "sess1", alice)); again != first {
		t.Fatalf("the session's second call went to %s, want %s", again, first)
	}
	if n := bus.channelReads() - reads; n != 0 {
		t.Errorf("the session's second call read its channel %d times, want 0", n)
	}
	bus.dropChannel(first)
	if again := mustRoundTrip(t, b, bus, chatCall(sk, `{"message":"3"}`, "sess1", alice)); again != first {
		t.Errorf("after its channel was deleted, the session's call went to %s, want %s", again, first)
	}
	if _, err := bus.FindChannel(t.Context(), first); err != nil {
		t.Errorf("the session's channel was not made anew: %v", err)
	}
}
