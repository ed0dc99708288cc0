package mcp

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// silentPeers is a replica's Peers whose messages nobody answers, as when
// every other replica was killed.
type silentPeers struct {
	instance string
	ch       chan []byte
}

func (p *silentPeers) Instance() string                                  { return p.instance }
func (p *silentPeers) Send(context.Context, string, []byte) error        { return nil }
func (p *silentPeers) Messages() <-chan []byte                           { return p.ch }
func (p *silentPeers) Collect(context.Context, string) ([][]byte, error) { return nil, nil }

// memEventLog is an EventLog in memory, shared by the test's replicas; it
// stores each event as it is recorded and prunes as the store would.
type memEventLog struct {
	mu     sync.Mutex
	events []*mcpgate.StreamEvent
}

func (l *memEventLog) Record(ev *mcpgate.StreamEvent, keepFrom int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = slices.DeleteFunc(append(l.events, ev), func(e *mcpgate.StreamEvent) bool {
		return e.Session == ev.Session && e.Replica == ev.Replica && e.Pos < keepFrom
	})
}

func (l *memEventLog) Events(_ context.Context, session, stream string, from uint64) ([]*mcpgate.StreamEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*mcpgate.StreamEvent
	for _, ev := range l.events {
		if ev.Session == session && ev.Stream == stream && ev.Seq >= from {
			out = append(out, ev)
		}
	}
	return out, nil
}

// mustReplica returns a harness with its own instance, sharing log and,
// when other is set, other's sessions.
func mustReplica(t *testing.T, instance string, log EventLog, other *harness) *harness {
	p := &silentPeers{instance: instance, ch: make(chan []byte)}
	t.Cleanup(func() { close(p.ch) })
	h := mustHarness(t, &Options{Peers: p, EventLog: log})
	if other != nil {
		h.store = other.store
		h.srv.store = other.store
	}
	return h
}

// TestResumeFromEventLog streams a call's reply on replica A, then resumes
// it after its first log event on replica B while A answers nothing (it
// was killed): B replays the rest of the reply from the event log, result
// included, and ends the stream there.
func TestResumeFromEventLog(t *testing.T) {
	log := &memEventLog{}
	a := mustReplica(t, "aaaaaaaaaaaa", log, nil)
	b := mustReplica(t, "bbbbbbbbbbbb", log, a)
	a.gw.setTool("log", logTool)
	sid := a.mustInit(t, "2025-11-25", nil)
	a.mustRPC(t, sid, `{"jsonrpc":"2.0","id":0,"method":"logging/setLevel","params":{"level":"debug"}}`)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","arguments":{"n":3}}}`
	sent := newSSEReader(a.do(t, req{session: sid, body: body})).mustEvents(t)
	if len(sent) < 4 {
		t.Fatalf("A sent %d events, want a priming event, logs and the result", len(sent))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hdr := map[string]string{"Accept": "text/event-stream", "Last-Event-ID": sent[1].ID}
	got := newSSEReader(b.doCtx(t, ctx, req{method: http.MethodGet, session: sid, header: hdr})).mustEvents(t)
	var want, ids []string
	for _, ev := range sent[2:] {
		want = append(want, ev.ID)
	}
	for _, ev := range got {
		ids = append(ids, ev.ID)
	}
	diff(t, "events replayed on B", want, ids)
}
