package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/peer"
	"github.com/mcpgate/mcpgate/sqlite"
)

// mutedPeers is real Peers whose sends can be stopped, as those of a
// replica that was killed.
type mutedPeers struct {
	*peer.Peers
	muted atomic.Bool
}

func (p *mutedPeers) Send(ctx context.Context, to string, msg []byte) error {
	if p.muted.Load() {
		return nil
	}
	return p.Peers.Send(ctx, to, msg)
}

// mustReplicas returns two replicas of the MRTR harness (see mustMRTR)
// joined by real Peers over one SQLite store and its bus, as replicas on
// one PostgreSQL database are; the first's Peers is returned too.
func mustReplicas(t *testing.T, asks int) (a, b *mrtrHarness, pa *mutedPeers) {
	t.Helper()
	store, err := sqlite.Open(context.Background(), t.TempDir()+"/mcpgate.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	signals := bus.New(&bus.Options{Store: store})
	t.Cleanup(func() { _ = signals.Close() })
	pa = &mutedPeers{Peers: peer.New(&peer.Options{Store: store, Signals: signals})}
	pb := peer.New(&peer.Options{Store: store, Signals: signals})
	t.Cleanup(func() { _ = pa.Close(); _ = pb.Close() })
	a = mustMRTRWith(t, asks, &Options{InputWait: time.Minute, Peers: pa})
	b = mustMRTRWith(t, asks, &Options{InputWait: time.Minute, Peers: pb})
	return a, b, pa
}

// nameAnswer is an elicitation answer with name.
func nameAnswer(name string) string {
	return `{"action":"accept","content":{"name":"` + name + `"}}`
}

func TestMultiRoundForwarded(t *testing.T) {
	a, b, _ := mustReplicas(t, 2)
	_, v := a.mustModern(t, mrtrReq(1, `{"x":1}`, ""))
	key1, state1 := inputRequired(t, v)
	// The retry reaches the replica that does not hold the call: it is
	// forwarded to the holder, whose next round comes back.
	_, v = b.mustModern(t, mrtrReq(2, `{"x":1}`, retry(state1, key1, nameAnswer("Ann"))))
	key2, state2 := inputRequired(t, v)
	diff(t, "id of the forwarded round's answer", float64(2), v["id"])
	// An earlier round's state is refused by the holder, through the
	// forwarding replica.
	_, v = b.mustModern(t, mrtrReq(3, `{"x":1}`, retry(state1, key1, nameAnswer("Old"))))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "earlier round") {
		t.Errorf("stale round through the other replica: %v %q", code, msg)
	}
	_, v = b.mustModern(t, mrtrReq(4, `{"x":1}`, retry(state2, key2, nameAnswer("Bo"))))
	res, _ := v["result"].(map[string]any)
	if res == nil || res["resultType"] != "complete" {
		t.Fatalf("final round: want a complete result, got %v", v)
	}
	diff(t, "id of the final answer", float64(4), v["id"])
	diff(t, "text", "hello Ann, Bo in mrtr-", res["content"].([]any)[0].(map[string]any)["text"])
	diff(t, "runs on the holder", int32(1), a.runs.Load())
	diff(t, "runs on the forwarding replica", int32(0), b.runs.Load())
	diff(t, "held calls", 0, a.srv.HeldCalls()+b.srv.HeldCalls())
	// The call is over: its state is spent, wherever it is sent.
	_, v = b.mustModern(t, mrtrReq(5, `{"x":1}`, retry(state2, key2, nameAnswer("Cy"))))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "no longer held") || !strings.Contains(msg, "call again without requestState") {
		t.Errorf("spent state through the other replica: %v %q", code, msg)
	}
}

func TestMultiRoundForwardedCancelled(t *testing.T) {
	a, b, _ := mustReplicas(t, 1)
	running, ended := make(chan struct{}), make(chan error, 1)
	a.gw.setTool("ask", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if _, err := call.Client.RequestClient(ctx, "elicitation/create", json.RawMessage(`{"message":"go?","requestedSchema":{"type":"object"}}`)); err != nil {
			return nil, err
		}
		close(running)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	_, v := a.mustModern(t, mrtrReq(1, `{}`, ""))
	key, state := inputRequired(t, v)
	ctx, cancel := context.WithCancel(context.Background())
	sent := make(chan error, 1)
	go func() {
		resp, err := b.send(ctx, mrtrReq(2, `{}`, retry(state, key, nameAnswer("Di"))))
		if err == nil {
			resp.Body.Close()
		}
		sent <- err
	}()
	<-running
	cancel() // the client of the forwarding replica goes: the call is cancelled on the holder
	if err := <-ended; !errors.Is(err, errCallerGone) {
		t.Errorf("the call ended with %v, want %v", err, errCallerGone)
	}
	<-sent
	waitUntil(t, "the holder to drop the call", func() bool { return a.srv.HeldCalls() == 0 })
	_, v = b.mustModern(t, mrtrReq(3, `{}`, retry(state, key, nameAnswer("Di"))))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "call again without requestState") {
		t.Errorf("retry after the cancel: %v %q", code, msg)
	}
}

func TestMultiRoundForwardedHolderGone(t *testing.T) {
	a, b, pa := mustReplicas(t, 1)
	_, v := a.mustModern(t, mrtrReq(1, `{}`, ""))
	key, state := inputRequired(t, v)
	_ = pa.Close() // the holder no longer receives anything, as when it was killed
	_, v = b.mustModern(t, mrtrReq(2, `{}`, retry(state, key, nameAnswer("Ed"))))
	if code, msg := errorOf(t, v); code != codeInvalidParams || !strings.Contains(msg, "did not answer") || !strings.Contains(msg, "call again without requestState") {
		t.Errorf("holder gone: %v %q", code, msg)
	}
	diff(t, "runs on the forwarding replica", int32(0), b.runs.Load())
}

func TestMultiRoundForwardedHolderSilent(t *testing.T) {
	t.Parallel()
	a, b, pa := mustReplicas(t, 1)
	running := make(chan struct{})
	a.gw.setTool("ask", func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if _, err := call.Client.RequestClient(ctx, "elicitation/create", json.RawMessage(`{"message":"go?","requestedSchema":{"type":"object"}}`)); err != nil {
			return nil, err
		}
		close(running)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, v := a.mustModern(t, mrtrReq(1, `{}`, ""))
	key, state := inputRequired(t, v)
	got := make(chan map[string]any, 1)
	go func() {
		resp, err := b.send(context.Background(), mrtrReq(2, `{}`, retry(state, key, nameAnswer("Fay"))))
		if err != nil {
			t.Error(err)
			got <- nil
			return
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		got <- v
	}()
	<-running
	pa.muted.Store(true) // the holder took the round, then falls silent
	v = <-got
	if code, msg := errorOf(t, v); code != codeInternal || !strings.Contains(msg, "stopped answering") || !strings.Contains(msg, "call again without requestState") {
		t.Errorf("holder silent mid-round: %v %q", code, msg)
	}
}

// waitUntil polls cond until it holds, failing after 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
