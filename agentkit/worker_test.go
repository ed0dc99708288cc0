package agentkit

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

func TestReplyAndDelta(t *testing.T) {
	g := newFakeGateway(t)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		if err := req.Delta("thinking about " + req.Text()); err != nil {
			return err
		}
		return req.Reply(ctx, &Reply{Text: "42", Data: map[string]int{"answer": 42}})
	})
	m := g.deliver(chat("life"))
	delta, reply := mustReceive(t, g.posted), mustReceive(t, g.posted)
	got := []string{text(delta), text(reply), string(reply.Body.Data)}
	want := []string{"agent_reply_delta " + m.ID + " thinking about life", "agent_reply " + m.ID + " 42", `{"answer":42}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("posted (-want +got):\n%s", diff)
	}
}

func TestHandlerOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		handler HandlerFunc
		want    string // the posted final message, or "ack"
	}{
		{"error", func(context.Context, *Request) error { return errors.New("no such column") }, "agent_error msg_1 no such column"},
		{"fail", func(ctx context.Context, req *Request) error { return req.Fail(ctx, "refused") }, "agent_error msg_1 refused"},
		{"panic", func(context.Context, *Request) error { panic("bug") }, "agent_error msg_1 the agent failed while answering"},
		{"silent", func(context.Context, *Request) error { return nil }, "ack"},
		{"reply then error", func(ctx context.Context, req *Request) error {
			req.Reply(ctx, Text("ok"))
			return errors.New("late")
		}, "agent_reply msg_1 ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t)
			startWorker(t, g, Options{}, tt.handler)
			g.deliver(chat("q"))
			var got string
			select {
			case m := <-g.posted:
				got = text(m)
			case id := <-g.ackedCh:
				got = "ack"
				if id != "msg_1" {
					t.Errorf("acked %s", id)
				}
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReplyTwice(t *testing.T) {
	g := newFakeGateway(t)
	second := make(chan error, 1)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		req.Reply(ctx, Text("one"))
		second <- req.Reply(ctx, Text("two"))
		return nil
	})
	g.deliver(chat("q"))
	if err := mustReceive(t, second); !errors.Is(err, ErrReplied) {
		t.Errorf("second reply: %v, want ErrReplied", err)
	}
}

func TestDuplicatesDropped(t *testing.T) {
	g := newFakeGateway(t)
	started, release, replied := make(chan string, 10), make(chan struct{}), make(chan error, 10)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		started <- req.ID()
		<-release
		err := req.Reply(ctx, Text("done"))
		replied <- err
		return err
	})
	m := g.deliver(chat("q"))
	mustReceive(t, started)
	g.redeliver(m) // while running: dropped
	marker := g.deliver(chat("marker"))
	if id := mustReceive(t, started); id != marker.ID {
		t.Fatalf("started %s, want the marker %s", id, marker.ID)
	}
	close(release)
	mustReceive(t, replied)
	mustReceive(t, replied)
	g.redeliver(m) // after its reply: acknowledged again, not handled
	if id := mustReceive(t, g.ackedCh); id != m.ID {
		t.Errorf("acked %s, want %s", id, m.ID)
	}
	mustNotReceive(t, started)
}

func TestCancel(t *testing.T) {
	g := newFakeGateway(t)
	started, cancelled := make(chan struct{}, 1), make(chan error, 1)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- ctx.Err()
		return ctx.Err()
	})
	m := g.deliver(chat("long"))
	mustReceive(t, started)
	c := g.deliver(&mcpgate.Message{Type: mcpgate.MessageCancel, InReplyTo: m.ID, ChannelID: m.ChannelID})
	if err := mustReceive(t, cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("handler ctx: %v", err)
	}
	acks := []string{mustReceive(t, g.ackedCh), mustReceive(t, g.ackedCh)}
	slices.Sort(acks)
	if diff := cmp.Diff([]string{m.ID, c.ID}, acks); diff != "" {
		t.Errorf("acks (-want +got):\n%s", diff)
	}
	mustNotReceive(t, g.posted)
}

func TestCancelBeforeStart(t *testing.T) {
	g := newFakeGateway(t)
	started := make(chan string, 10)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		started <- req.ID()
		return req.Reply(ctx, Text("x"))
	})
	g.deliver(&mcpgate.Message{ID: "msg_late", Type: mcpgate.MessageCancel, InReplyTo: "msg_gone"})
	mustReceive(t, g.ackedCh)
	g.deliver(&mcpgate.Message{ID: "msg_gone", Type: mcpgate.MessageChat, Tool: "helper"})
	if id := mustReceive(t, g.ackedCh); id != "msg_gone" {
		t.Errorf("acked %s", id)
	}
	mustNotReceive(t, started)
}

func TestReconnectResumes(t *testing.T) {
	g := newFakeGateway(t)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		return req.Reply(ctx, Text("re: "+req.Text()))
	})
	g.deliver(chat("one"))
	mustReceive(t, g.posted) // seq 2
	g.dropStreams()
	mustReceive(t, g.connected)
	g.deliver(chat("two"))
	if got := text(mustReceive(t, g.posted)); got != "agent_reply msg_3 re: two" {
		t.Errorf("after reconnect: %q", got)
	}
	if diff := cmp.Diff([]string{"", "1"}, g.lastEventIDs()); diff != "" {
		t.Errorf("Last-Event-ID per stream (-want +got):\n%s", diff)
	}
}

func TestUnauthorized(t *testing.T) {
	g := newFakeGateway(t)
	w := New(Options{URL: g.srv.URL, Key: "bak_wrong"})
	w.Handle(func(context.Context, *Request) error { return nil })
	err := w.Run(context.Background())
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || se.Message != "unknown key" {
		t.Errorf("Run = %v, want a 401 StatusError", err)
	}
	if err := New(Options{}).Run(context.Background()); !errors.Is(err, errNoHandler) {
		t.Errorf("Run without handler = %v", err)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	g := newFakeGateway(t)
	var mu sync.Mutex
	running, peak := 0, 0
	started, release := make(chan struct{}, 10), make(chan struct{})
	startWorker(t, g, Options{Concurrency: 2}, func(ctx context.Context, req *Request) error {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		started <- struct{}{}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return req.Reply(ctx, Text("ok"))
	})
	for range 5 {
		g.deliver(chat("q"))
	}
	mustReceive(t, started)
	mustReceive(t, started)
	close(release)
	for range 5 {
		mustReceive(t, g.posted)
	}
	if peak != 2 {
		t.Errorf("peak concurrency %d, want 2", peak)
	}
}

// TestRepliesReuseConnections: handlers replying all at once, round after
// round, reuse the connections of the rounds before instead of opening new
// ones (the default transport kept two idle: a round of 8 opened 6 more).
func TestRepliesReuseConnections(t *testing.T) {
	const n, rounds = 8, 4
	g := newFakeGateway(t)
	var mu sync.Mutex
	waiting, all := 0, make(chan struct{})
	startWorker(t, g, Options{Concurrency: n}, func(ctx context.Context, req *Request) error {
		mu.Lock()
		if waiting++; waiting == n {
			close(all)
		}
		barrier := all
		mu.Unlock()
		<-barrier // every handler of the round replies at once
		return req.Reply(ctx, Text("ok"))
	})
	for range rounds {
		for range n {
			g.deliver(chat("q"))
		}
		for range n {
			mustReceive(t, g.posted)
		}
		mu.Lock()
		waiting, all = 0, make(chan struct{})
		mu.Unlock()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.posters) > 2*n {
		t.Errorf("%d rounds of %d replies at once came over %d connections, want at most %d", rounds, n, len(g.posters), 2*n)
	}
}

func TestHistory(t *testing.T) {
	g := newFakeGateway(t)
	g.addHistory("ch_h", 150)
	got := make(chan []*mcpgate.Message, 1)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		h, err := req.History(ctx)
		if err != nil {
			return err
		}
		got <- h
		return req.Reply(ctx, Text("ok"))
	})
	m := chat("now")
	m.ChannelID = "ch_h"
	g.deliver(m)
	h := mustReceive(t, got)
	if len(h) != 150 || h[0].Seq != 1 || h[149].Seq != 150 {
		t.Errorf("history: %d messages", len(h))
	}
}

func TestRequestText(t *testing.T) {
	tests := []struct {
		name string
		m    *mcpgate.Message
		want string
	}{
		{"body", &mcpgate.Message{Body: mcpgate.MessageBody{Text: "hi"}, Arguments: json.RawMessage(`{"message":"no"}`)}, "hi"},
		{"arguments", &mcpgate.Message{Arguments: json.RawMessage(`{"message":"hello"}`)}, "hello"},
		{"declared tool", &mcpgate.Message{Arguments: json.RawMessage(`{"column":"a"}`)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newRequest(context.Background(), tt.m, nil, nil).Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A handler reads the call's trace context, as an OpenTelemetry carrier.
func TestRequestTrace(t *testing.T) {
	g := newFakeGateway(t)
	startWorker(t, g, Options{}, func(ctx context.Context, req *Request) error {
		return req.Reply(ctx, Text(req.Trace().Get("traceparent")))
	})
	m := chat("q")
	m.Trace = mcpgate.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	g.deliver(m)
	if got, want := text(mustReceive(t, g.posted)), "agent_reply msg_1 "+m.Trace.Parent; got != want {
		t.Errorf("posted %q, want %q", got, want)
	}
}
