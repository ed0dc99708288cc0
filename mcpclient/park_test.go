package mcpclient

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/h1"
)

// Over h1, a reply stream whose answer came before its end is parked in
// the pool (no goroutine reads its end): right after the call, while the
// server still holds the stream open, the connection waits in the pool
// again; once the end came, the next call goes through.
func TestAnswerBeforeStreamEndParks(t *testing.T) {
	hold := make(chan struct{})
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		sseEvent(w, "", `{"jsonrpc":"2.0","id":`+id+`,"result":{"ok":true}}`)
		<-hold // the end of the stream comes later
	}}
	var d net.Dialer
	var dials atomic.Int32
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	h := &h1.Transport{Dial: dial, Next: http.DefaultTransport}
	t.Cleanup(h.CloseIdleConnections)
	tr := NewHTTP(serveFake(t, f), &http.Client{Transport: h}, nil)
	tr.(*httpTransport).drainWait = time.Minute
	s := connect(t, tr, nil)
	call := func() {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel() // as the upstream backend's context ends once the call returns
		res, err := s.Call(ctx, "tools/call", json.RawMessage(`{}`), nil)
		if err != nil || string(res) != `{"ok":true}` {
			t.Fatalf("got %s, %v", res, err)
		}
	}
	tr.(*httpTransport).listen.Wait() // the fake refuses the GET stream: every connection is idle now
	done := make(chan struct{})
	go func() { defer close(done); call() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second): // not a timing: the stream is held until the call returns
		close(hold)
		t.Fatal("the call waited for the end of its reply stream")
	}
	if idle, open := h.Idle(), int(dials.Load()); idle != open {
		t.Errorf("%d idle connections of %d after the call: the one carrying the held stream is not parked in the pool", idle, open)
	}
	close(hold)
	call()
}
