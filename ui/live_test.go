package ui

import (
	"testing"

	"github.com/mcpgate/mcpgate"
)

// TestLiveNeverBlocks: a stream that reads nothing costs the publisher
// nothing (it keeps the first liveBuffer events and misses the rest), a
// cancelled stream hears nothing more, and close refuses new streams.
func TestLiveNeverBlocks(t *testing.T) {
	l := newLive()
	slow, _, _ := l.subscribe()
	gone, cancel, _ := l.subscribe()
	cancel()
	for range 3 * liveBuffer {
		l.publish(&mcpgate.Approval{ID: "apr_1"})
	}
	if len(slow) != liveBuffer || len(gone) != 0 {
		t.Fatalf("buffered %d and %d events, want %d and 0", len(slow), len(gone), liveBuffer)
	}
	l.close()
	l.close()
	if _, _, ok := l.subscribe(); ok {
		t.Fatal("a stream was opened after close")
	}
	select {
	case <-l.done:
	default:
		t.Fatal("close did not end the streams")
	}
}
