package pipeline

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// memApprovals is an in-memory ApprovalStore with the store's contract
// (the first decision wins), which reports each approval created.
type memApprovals struct {
	mu      sync.Mutex
	rows    map[string]*mcpgate.Approval
	created chan *mcpgate.Approval
}

func newMemApprovals() *memApprovals {
	return &memApprovals{rows: map[string]*mcpgate.Approval{}, created: make(chan *mcpgate.Approval, 8)}
}

func (m *memApprovals) CreateApproval(_ context.Context, a *mcpgate.Approval) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a.ID, a.State = mcpgate.NewID("apr_"), mcpgate.ApprovalPending
	cp := *a
	m.rows[a.ID] = &cp
	m.created <- &cp
	return nil
}

func (m *memApprovals) FindApproval(_ context.Context, id string) (*mcpgate.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.rows[id]
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no %s", id)
	}
	cp := *a
	return &cp, nil
}

func (m *memApprovals) FindApprovalByKey(_ context.Context, identity, agentID, key string) (*mcpgate.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.rows {
		if key != "" && a.Identity == identity && a.AgentID == agentID && a.IdempotencyKey == key {
			cp := *a
			return &cp, nil
		}
	}
	return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no key %s", key)
}

func (m *memApprovals) DecideApproval(_ context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.rows[id]
	if a.State != mcpgate.ApprovalPending {
		cp := *a
		return &cp, mcpgate.Errorf(mcpgate.ECONFLICT, "decided")
	}
	a.State, a.Reviewer, a.Reason, a.DecidedAt = d.State, d.Reviewer, d.Reason, d.At
	cp := *a
	return &cp, nil
}

func (m *memApprovals) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rows)
}

// memSignals is an in-process Signals.
type memSignals struct {
	mu      sync.Mutex
	waiters map[string][]chan struct{}
}

func (s *memSignals) Watch(ctx context.Context, topic string) <-chan struct{} {
	c := make(chan struct{}, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiters == nil {
		s.waiters = map[string][]chan struct{}{}
	}
	s.waiters[topic] = append(s.waiters[topic], c)
	return c
}

// watchers counts the waiters of topic so far.
func (s *memSignals) watchers(topic string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters[topic])
}

func (s *memSignals) Signal(_ context.Context, topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.waiters[topic] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// gateHarness is a pipeline whose tool "delete" needs approval, "peek"
// (same skill) never does, and "quick" waits for at most 20ms.
type gateHarness struct {
	*harness
	approvals *memApprovals
	signals   *memSignals
	audit     *audited
}

func newGateHarness(tb testing.TB) *gateHarness {
	in := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	reg := registry.New(source{[]*mcpgate.Skill{
		{AgentID: "a1", Name: "files", Kind: mcpgate.SkillREST, AutoApprove: false, Approvers: []string{"alice"}, Tools: []*mcpgate.Tool{
			{Name: "delete", InputSchema: in}, {Name: "peek", InputSchema: in, Approval: mcpgate.ApprovalNever}}},
		{AgentID: "a1", Name: "short", Kind: mcpgate.SkillREST, AutoApprove: true, ApprovalTimeout: mcpgate.Duration(20 * time.Millisecond), Tools: []*mcpgate.Tool{
			{Name: "quick", InputSchema: in, Approval: mcpgate.ApprovalRequired}}},
	}}, nil)
	if err := reg.Reload(context.Background()); err != nil {
		tb.Fatal(err)
	}
	h := newHarness(tb, nil)
	g := &gateHarness{harness: h, approvals: newMemApprovals(), signals: &memSignals{}, audit: &audited{}}
	h.p = New(&Options{
		Tables: reg, Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest},
		Idempotency: &memKeys{rows: map[string]*mcpgate.IdempotencyClaim{}}, Auditor: g.audit,
		Approvals: g.approvals, Signals: g.signals, ApprovalPoll: time.Hour, // only signals wake
		Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
	})
	return g
}

// outcome is a call's answer.
type outcome struct {
	res *mcpgate.Result
	err error
}

// start runs a call in the background.
func (g *gateHarness) start(ctx context.Context, tool, args string) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		res, err := g.keyedCall(ctx, tool, args)
		out <- outcome{res, err}
	}()
	return out
}

// decide decides a and wakes its waiters, as the API does.
func (g *gateHarness) decide(tb testing.TB, a *mcpgate.Approval, state mcpgate.ApprovalState, reason string) {
	tb.Helper()
	if _, err := g.approvals.DecideApproval(context.Background(), a.ID, mcpgate.Decision{State: state, Reviewer: "alice", Reason: reason}); err != nil {
		tb.Fatal(err)
	}
	g.signals.Signal(context.Background(), ApprovalTopic(a.ID))
}

func resultText(r *mcpgate.Result) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

func TestApprovalApproved(t *testing.T) {
	g := newGateHarness(t)
	done := g.start(context.Background(), "delete", `{ "path" : "/tmp/x" }`)
	a := <-g.approvals.created
	if a.Tool != "delete" || string(a.Arguments) != `{"path":"/tmp/x"}` || a.Identity != "user:u1" || a.Deadline.Sub(a.RequestedAt) != mcpgate.DefaultApprovalTimeout {
		t.Fatalf("approval = %+v", a)
	}
	g.decide(t, a, mcpgate.ApprovalApproved, "")
	o := <-done
	if o.err != nil || o.res.IsError || resultText(o.res) != `{"path":"/tmp/x"}` {
		t.Fatalf("result = %+v, %v", o.res, o.err)
	}
	if got := g.rest.callLog(); len(got) != 1 || got[0] != `delete {"path":"/tmp/x"}` {
		t.Fatalf("backend calls = %q; want the approved arguments once", got)
	}
}

func TestApprovalRejected(t *testing.T) {
	g := newGateHarness(t)
	done := g.start(context.Background(), "delete", `{"path":"/etc"}`)
	g.decide(t, <-g.approvals.created, mcpgate.ApprovalRejected, "not that one")
	o := <-done
	if o.err != nil || !o.res.IsError || resultText(o.res) != "Call to delete was rejected by alice: not that one" {
		t.Fatalf("result = %+v, %v", o.res, o.err)
	}
	if len(g.rest.callLog()) != 0 {
		t.Fatal("a rejected call reached the backend")
	}
	if got := g.audit.outcomes(); len(got) != 1 || got[0] != mcpgate.OutcomeRejected {
		t.Fatalf("audit outcomes = %q; want rejected", got)
	}
}

func TestApprovalTimeout(t *testing.T) {
	g := newGateHarness(t)
	o := <-g.start(context.Background(), "quick", `{}`)
	if o.err != nil || !o.res.IsError || resultText(o.res) != "rejected: no decision within 20ms" {
		t.Fatalf("result = %+v, %v", o.res, o.err)
	}
	for _, a := range g.approvals.rows {
		if a.State != mcpgate.ApprovalExpired {
			t.Fatalf("approval state = %s; want expired", a.State)
		}
	}
}

func TestApprovalOverrides(t *testing.T) {
	g := newGateHarness(t)
	o := <-g.start(context.Background(), "peek", `{}`)
	if o.err != nil || o.res.IsError || g.approvals.count() != 0 {
		t.Fatalf("approval: never asked for approval: %+v, %v", o.res, o.err)
	}
}

func TestApprovalCanceledWithdraws(t *testing.T) {
	g := newGateHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := g.start(ctx, "delete", `{}`)
	a := <-g.approvals.created
	cancel()
	// ECANCELED, not the context's bare error, which the pipeline would
	// log as an internal failure.
	if o := <-done; mcpgate.ErrorCode(o.err) != mcpgate.ECANCELED {
		t.Fatalf("canceled call: %+v, %v", o.res, o.err)
	}
	got, _ := g.approvals.FindApproval(context.Background(), a.ID)
	if got.State != mcpgate.ApprovalWithdrawn {
		t.Fatalf("state = %s; want withdrawn", got.State)
	}
}

// TestApprovalRetryAttaches retries a call with its idempotency key while
// the first try waits, and after the first try was canceled: neither asks
// for a second approval, and the backend runs once.
func TestApprovalRetryAttaches(t *testing.T) {
	g := newGateHarness(t)
	args := `{"path":"/tmp/y","idempotency_key":"k-7"}`
	first := g.start(context.Background(), "delete", args)
	a := <-g.approvals.created
	second := g.start(context.Background(), "delete", args)
	lostCtx, lose := context.WithCancel(context.Background())
	third := g.start(lostCtx, "delete", args)
	lose() // a caller that lost its connection
	<-third
	g.decide(t, a, mcpgate.ApprovalApproved, "")
	for i, done := range []<-chan outcome{first, second} {
		o := <-done
		if o.err != nil || o.res.IsError {
			t.Fatalf("try %d: %+v, %v", i+1, o.res, o.err)
		}
	}
	if n := g.approvals.count(); n != 1 {
		t.Fatalf("%d approvals; want 1", n)
	}
	if got := g.rest.callLog(); len(got) != 1 {
		t.Fatalf("backend calls = %q; want one", got)
	}
	o := <-g.start(context.Background(), "delete", args)
	if o.err != nil || !strings.Contains(string(mustJSON(t, o.res)), ReplayMeta) {
		t.Fatalf("retry after the result: %+v, %v; want the replay", o.res, o.err)
	}
}

func (m *memKeys) FindIdempotency(_ context.Context, identity, agentID, key string) (*mcpgate.IdempotencyClaim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[identity+"|"+agentID+"|"+key]
	if !ok {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "no key")
	}
	cp := *r
	return &cp, nil
}
