package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// published keeps the events a pipeline publishes.
type published struct {
	mu     sync.Mutex
	events []*mcpgate.Event
}

func (p *published) Publish(_ context.Context, e *mcpgate.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, e)
}

// choosy is an Events that wants only the calls that failed.
type choosy struct{ published }

func (*choosy) Wants(_, eventType string) bool { return eventType == mcpgate.EventCallFailed }

// TestCallPublishesOnlyWantedEvents: an event no subscriber wants is not
// made.
func TestCallPublishesOnlyWantedEvents(t *testing.T) {
	h := newHarness(t, func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if strings.Contains(string(call.Arguments), "no") {
			return mcpgate.ErrorResult("HTTP 400"), nil
		}
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	ev := &choosy{}
	h.p = New(&Options{Tables: mustRegistry(t), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest},
		Events: ev, Logger: slog.New(slog.DiscardHandler)})
	agent := &mcpgate.Agent{ID: "a1", OwnerID: "u1"}
	for _, args := range []string{`{"q":"hi"}`, `{"q":"no"}`, `{"q":"hi"}`} {
		h.p.Call(context.Background(), &mcpgate.Call{Agent: agent, ToolName: "echo", Arguments: json.RawMessage(args), Notifier: mcpgate.NopNotifier{}})
	}
	if len(ev.events) != 1 || ev.events[0].Type != mcpgate.EventCallFailed {
		t.Fatalf("published %d events, want the one failed call's", len(ev.events))
	}
}

func TestCallPublishesOneEventPerCall(t *testing.T) {
	h := newHarness(t, func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if strings.Contains(string(call.Arguments), "boom") {
			return nil, errors.New("connection refused to the secret host")
		}
		if strings.Contains(string(call.Arguments), "no") {
			return mcpgate.ErrorResult("HTTP 400: %s", call.Arguments), nil
		}
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	ev, audit := &published{}, &audited{}
	h.p = New(&Options{Tables: mustRegistry(t), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest},
		Events: ev, Auditor: audit, Logger: slog.New(slog.DiscardHandler)})
	agent := &mcpgate.Agent{ID: "a1", OwnerID: "u1"}
	for _, args := range []string{`{"q":"hi"}`, `{"q":"no sk-secret"}`, `{"q":"boom"}`, `{"q":1}`} {
		h.p.Call(context.Background(), &mcpgate.Call{Agent: agent, ToolName: "echo", Arguments: json.RawMessage(args), Notifier: mcpgate.NopNotifier{}})
	}
	type row struct{ Type, Outcome, Error string }
	var got []row
	for i, e := range ev.events {
		var d callEventData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if e.UserID != "u1" || e.AgentID != "a1" || d.Agent != "a1" || d.Skill != "crm" || d.Tool != "echo" || !strings.HasPrefix(e.ID, "evt_") {
			t.Errorf("event %d: %+v %+v", i, e, d)
		}
		if d.CallID != audit.recs[i].ID || d.CallID == "" {
			t.Errorf("event %d names call %q, the audit log %q", i, d.CallID, audit.recs[i].ID)
		}
		if strings.Contains(string(e.Data), "sk-secret") {
			t.Errorf("event %d carries the arguments: %s", i, e.Data)
		}
		got = append(got, row{e.Type, d.Outcome, d.Error})
	}
	want := []row{
		{mcpgate.EventCallCompleted, mcpgate.OutcomeOK, ""},
		{mcpgate.EventCallFailed, mcpgate.OutcomeToolError, "the tool reported an error"},
		{mcpgate.EventCallFailed, mcpgate.OutcomeRejected, "Internal error."},
		{mcpgate.EventCallFailed, mcpgate.OutcomeInvalid, "the arguments did not match the tool's input schema"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// deferring is a Notifier that takes deferred work (mcpgate.Deferrer), as
// the MCP endpoint's reply does, until run runs it.
type deferring struct {
	mcpgate.NopNotifier
	later []func()
	ran   bool
}

func (d *deferring) Defer(f func()) bool {
	if d.ran {
		return false
	}
	d.later = append(d.later, f)
	return true
}

func (d *deferring) run() {
	d.ran = true
	for _, f := range d.later {
		f()
	}
}

// TestAuditAndEventAfterTheReply: a call whose Notifier defers work has
// its metrics, its backend's time, its audit record and its event
// recorded only when the deferred work runs (after the reply); a Notifier
// that cannot defer gets them before Call returns.
func TestAuditAndEventAfterTheReply(t *testing.T) {
	h := newHarness(t, func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	ev, audit, rec, backend := &published{}, &audited{}, &recorder{}, &backendRecorder{}
	h.p = New(&Options{Tables: mustRegistry(t), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest},
		Events: ev, Auditor: audit, Recorder: rec, BackendRecorder: backend, Logger: slog.New(slog.DiscardHandler)})
	agent := &mcpgate.Agent{ID: "a1", OwnerID: "u1"}
	d := &deferring{}
	if _, err := h.p.Call(context.Background(), &mcpgate.Call{Agent: agent, ToolName: "echo", Arguments: json.RawMessage(`{"q":"hi"}`), Notifier: d}); err != nil {
		t.Fatal(err)
	}
	counts := func() [4]int {
		return [4]int{len(rec.observations()), backend.count(), len(audit.recs), len(ev.events)}
	}
	if got := counts(); got != [4]int{} {
		t.Fatalf("before the deferred work: %v calls, backend times, audit records and events recorded, want none", got)
	}
	d.run()
	if got := counts(); got != [4]int{1, 1, 1, 1} || audit.recs[0].Outcome != mcpgate.OutcomeOK {
		t.Fatalf("after the deferred work: %v recorded, want one of each", got)
	}
	h.p.Call(context.Background(), &mcpgate.Call{Agent: agent, ToolName: "echo", Arguments: json.RawMessage(`{"q":"hi"}`), Notifier: d})
	if got := counts(); got != [4]int{2, 2, 2, 2} {
		t.Errorf("with a Notifier whose work ran: %v recorded before Call returned, want two of each", got)
	}
}
