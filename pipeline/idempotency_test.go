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

// memKeys is an in-memory IdempotencyStore with the store's contract.
type memKeys struct {
	mu   sync.Mutex
	rows map[string]*mcpgate.IdempotencyClaim
}

func (m *memKeys) ClaimIdempotency(_ context.Context, c *mcpgate.IdempotencyClaim, now time.Time) (*mcpgate.IdempotencyClaim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := c.Identity + "|" + c.AgentID + "|" + c.Key
	if r, ok := m.rows[id]; ok && !(r.ExpiresAt.Before(now) || (!r.Done() && !now.Before(r.StaleAt))) {
		cp := *r
		return &cp, nil
	}
	c.Token = mcpgate.NewID("t")
	cp := *c
	m.rows[id] = &cp
	return nil, nil
}

func (m *memKeys) CompleteIdempotency(_ context.Context, c *mcpgate.IdempotencyClaim, result []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.rows[c.Identity+"|"+c.AgentID+"|"+c.Key]
	if !ok || r.Token != c.Token {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "gone")
	}
	r.Result = result
	return nil
}

func (m *memKeys) ReleaseIdempotency(_ context.Context, c *mcpgate.IdempotencyClaim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := c.Identity + "|" + c.AgentID + "|" + c.Key
	if r, ok := m.rows[id]; ok && r.Token == c.Token {
		delete(m.rows, id)
	}
	return nil
}

// audited keeps the records an Auditor gets.
type audited struct {
	mu   sync.Mutex
	recs []*mcpgate.CallRecord
}

func (a *audited) Audit(rec *mcpgate.CallRecord, _ *mcpgate.Tool, _ any, _ *mcpgate.Result) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, rec)
}

func (a *audited) outcomes() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.recs {
		out = append(out, r.Outcome)
	}
	return out
}

// newIdemHarness is newHarness with idempotency keys and an auditor.
func newIdemHarness(tb testing.TB, rest backendFunc) (*harness, *audited) {
	h := newHarness(tb, rest)
	a := &audited{}
	h.p = New(&Options{
		Tables: mustRegistry(tb), Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest},
		Idempotency: &memKeys{rows: map[string]*mcpgate.IdempotencyClaim{}}, Auditor: a,
		Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
	})
	return h, a
}

// keyedCall runs a call of a1 as user u1.
func (h *harness) keyedCall(ctx context.Context, tool, args string) (*mcpgate.Result, error) {
	c := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: tool, Arguments: json.RawMessage(args),
		Caller: (&mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k1", UserID: "u1"}).Caller(), Notifier: mcpgate.NopNotifier{}}
	return h.p.Call(ctx, c)
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestIdempotencyReplay(t *testing.T) {
	h, a := newIdemHarness(t, nil)
	ctx := context.Background()
	first, err := h.keyedCall(ctx, "echo", `{"q":"x","idempotency_key":"k-1"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, first); got != `{"content":[{"type":"text","text":"{\"q\":\"x\"}"}]}` {
		t.Fatalf("first result %s: the key must not reach the backend", got)
	}
	again, err := h.keyedCall(ctx, "echo", `{ "idempotency_key":"k-1", "q":"x" }`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"` + ReplayMeta + `":true},"content":[{"type":"text","text":"{\"q\":\"x\"}"}]}`
	if got := mustJSON(t, again); got != want {
		t.Fatalf("replay = %s, want %s", got, want)
	}
	if n := len(h.rest.callLog()); n != 1 {
		t.Fatalf("backend called %d times, want once", n)
	}
	if got := strings.Join(a.outcomes(), ","); got != "ok,replayed" {
		t.Fatalf("audit outcomes %s", got)
	}
	if r := a.recs[1]; r.IdempotencyKey != "k-1" || r.ArgsHash == "" || r.ArgsHash != a.recs[0].ArgsHash || r.UserID != "u1" {
		t.Fatalf("audit record %+v", r)
	}
}

func TestIdempotencyMismatch(t *testing.T) {
	h, a := newIdemHarness(t, nil)
	ctx := context.Background()
	if _, err := h.keyedCall(ctx, "echo", `{"q":"x","idempotency_key":"k"}`); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"echo", `{"q":"y","idempotency_key":"k"}`}, {"report", `{"q":"x","idempotency_key":"k"}`}} {
		_, err := h.keyedCall(ctx, c[0], c[1])
		if mcpgate.ErrorCode(err) != mcpgate.EMISMATCH {
			t.Fatalf("%s %s: err = %v, want EMISMATCH", c[0], c[1], err)
		}
	}
	if got := strings.Join(a.outcomes(), ","); got != "ok,conflict,conflict" {
		t.Fatalf("audit outcomes %s", got)
	}
}

func TestIdempotencyInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	h, _ := newIdemHarness(t, func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		close(started)
		<-release
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("done")}}, nil
	})
	ctx := context.Background()
	done := make(chan error)
	go func() {
		_, err := h.keyedCall(ctx, "echo", `{"idempotency_key":"k"}`)
		done <- err
	}()
	<-started
	_, err := h.keyedCall(ctx, "echo", `{"idempotency_key":"k"}`)
	if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT || !strings.Contains(mcpgate.ErrorMessage(err), "rotate the key") {
		t.Fatalf("err = %v, want ECONFLICT saying to wait or rotate the key", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestIdempotencyGatewayErrorReleases(t *testing.T) {
	fail := true
	h, _ := newIdemHarness(t, func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if fail {
			return nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "down")
		}
		return mcpgate.ErrorResult("the backend said no"), nil
	})
	ctx := context.Background()
	if _, err := h.keyedCall(ctx, "echo", `{"idempotency_key":"k"}`); mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE {
		t.Fatalf("err = %v", err)
	}
	fail = false
	res, err := h.keyedCall(ctx, "echo", `{"idempotency_key":"k"}`)
	if err != nil || !res.IsError {
		t.Fatalf("retry after a gateway error: %v, %+v", err, res)
	}
	// A tool error is stored and replayed.
	fail = true
	res, err = h.keyedCall(ctx, "echo", `{"idempotency_key":"k"}`)
	if err != nil || !strings.Contains(mustJSON(t, res), `"isError":true`) || !strings.Contains(mustJSON(t, res), ReplayMeta) {
		t.Fatalf("replay of a tool error: %v, %s", err, mustJSON(t, res))
	}
	if n := len(h.rest.callLog()); n != 2 {
		t.Fatalf("backend called %d times, want 2", n)
	}
}

func TestIdempotencyKeyInvalid(t *testing.T) {
	h, a := newIdemHarness(t, nil)
	for _, key := range []string{`""`, `12`, `null`, `"` + strings.Repeat("k", 256) + `"`, `"a\u0007b"`} {
		_, err := h.keyedCall(context.Background(), "echo", `{"idempotency_key":`+key+`}`)
		if mcpgate.ErrorCode(err) != mcpgate.EINVALID {
			t.Errorf("key %s: err = %v, want EINVALID", key, err)
		}
	}
	if _, err := h.keyedCall(context.Background(), "echo", `{"idempotency_key":"`+strings.Repeat("é", 255)+`"}`); err != nil {
		t.Errorf("255 printable characters refused: %v", err)
	}
	if len(h.rest.callLog()) != 1 || a.outcomes()[0] != mcpgate.OutcomeInvalid {
		t.Fatalf("backend calls %v, outcomes %v", h.rest.callLog(), a.outcomes())
	}
}

func TestIdempotencyKeyDeclared(t *testing.T) {
	e := mustRegistry(t)
	tbl, _ := e.Table("a1")
	entry := tbl.Lookup("echo")
	entry.Tool = &mcpgate.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"idempotency_key":{"type":"string"}}}`)}
	call := &mcpgate.Call{Arguments: json.RawMessage(`{"idempotency_key":"k","q":1}`)}
	key, err := takeIdempotencyKey(entry, call)
	if err != nil || key != "k" || string(call.Arguments) != `{"idempotency_key":"k","q":1}` {
		t.Fatalf("declared key: %q, %v, arguments %s", key, err, call.Arguments)
	}
}

func TestMarkReplay(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{"_meta":{"` + ReplayMeta + `":true}}`},
		{` {"content":[] } `, `{"_meta":{"` + ReplayMeta + `":true},"content":[] }`},
		{`{"content":[],"_meta":{"a":1}}`, `{"_meta":{"a":1,"` + ReplayMeta + `":true},"content":[]}`},
	} {
		if got := string(markReplay([]byte(tc.in))); got != tc.want {
			t.Errorf("markReplay(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	ok := &mcpgate.Result{}
	for _, tc := range []struct {
		st   callState
		res  *mcpgate.Result
		err  error
		want string
	}{
		{callState{}, ok, nil, mcpgate.OutcomeOK},
		{callState{replayed: true}, ok, nil, mcpgate.OutcomeReplayed},
		{callState{}, &mcpgate.Result{IsError: true}, nil, mcpgate.OutcomeToolError},
		{callState{}, &mcpgate.Result{IsError: true, Invalid: mcpgate.Errorf(mcpgate.EINVALID, "x")}, nil, mcpgate.OutcomeInvalid},
		{callState{}, &mcpgate.Result{IsError: true, Failure: mcpgate.ETIMEOUT}, nil, mcpgate.OutcomeTimeout},
		{callState{}, &mcpgate.Result{IsError: true, Failure: mcpgate.EUNAVAILABLE}, nil, mcpgate.OutcomeUnavailable},
		{callState{}, nil, mcpgate.Errorf(mcpgate.ETIMEOUT, "x"), mcpgate.OutcomeTimeout},
		{callState{}, nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "x"), mcpgate.OutcomeUnavailable},
		{callState{}, nil, mcpgate.Errorf(mcpgate.ERATELIMIT, "x"), mcpgate.OutcomeRateLimited},
		{callState{}, nil, mcpgate.Errorf(mcpgate.ECONFLICT, "x"), mcpgate.OutcomeConflict},
		{callState{}, nil, mcpgate.Errorf(mcpgate.EMISMATCH, "x"), mcpgate.OutcomeConflict},
		{callState{}, nil, mcpgate.Errorf(mcpgate.EINVALID, "x"), mcpgate.OutcomeInvalid},
		{callState{}, nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "x"), mcpgate.OutcomeRejected},
		{callState{}, nil, mcpgate.Errorf(mcpgate.ECANCELED, "x"), mcpgate.OutcomeRejected},
	} {
		if got := outcomeOf(&tc.st, tc.res, tc.err); got != tc.want {
			t.Errorf("outcomeOf(%+v, %v) = %s, want %s", tc.res, tc.err, got, tc.want)
		}
	}
}

// TestIdempotencyTimeoutReleases checks the pipeline's own timeout: the
// key is released and the audit record says timeout.
func TestIdempotencyTimeoutReleases(t *testing.T) {
	calls := 0
	h, a := newIdemHarness(t, func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		calls++
		if calls == 1 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &mcpgate.Result{}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if _, err := h.keyedCall(ctx, "echo", `{"idempotency_key":"k"}`); err == nil {
		t.Fatal("a canceled call succeeded")
	}
	if _, err := h.keyedCall(context.Background(), "echo", `{"idempotency_key":"k"}`); err != nil {
		t.Fatalf("retry after a failed call: %v", err)
	}
	if got := a.outcomes(); len(got) != 2 || got[1] != mcpgate.OutcomeOK {
		t.Fatalf("outcomes %v", got)
	}
}

// TestIdempotencyBackendFailureReleases checks a result whose backend
// could not serve the call (a REST API that timed out or refused the
// connection): the caller gets the result, the key is released so that a
// retry runs, and the audit log says timeout or unavailable.
func TestIdempotencyBackendFailureReleases(t *testing.T) {
	failures := []string{mcpgate.ETIMEOUT, mcpgate.EUNAVAILABLE}
	h, a := newIdemHarness(t, func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		if len(failures) == 0 {
			return &mcpgate.Result{}, nil
		}
		res := mcpgate.ErrorResult("Request to api failed.")
		res.Failure, failures = failures[0], failures[1:]
		return res, nil
	})
	for range 3 {
		if _, err := h.keyedCall(context.Background(), "echo", `{"idempotency_key":"k"}`); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{mcpgate.OutcomeTimeout, mcpgate.OutcomeUnavailable, mcpgate.OutcomeOK}
	if got := a.outcomes(); strings.Join(got, " ") != strings.Join(want, " ") || len(h.rest.callLog()) != 3 {
		t.Fatalf("outcomes %v, backend calls %d; want %v and 3", got, len(h.rest.callLog()), want)
	}
}

// A claim holds its key for the tool's deadline (and any approval wait)
// plus Options.ClaimGrace, DefaultClaimGrace when unset.
func TestClaimLife(t *testing.T) {
	e := &registry.Entry{Skill: &mcpgate.Skill{Name: "s", Timeout: mcpgate.Duration(time.Second)}, Tool: &mcpgate.Tool{Name: "t"}}
	life := func(grace time.Duration) time.Duration {
		return New(&Options{Tables: mustRegistry(t), ClaimGrace: grace}).claimLife(e)
	}
	if d := life(0) - life(5*time.Second); d != DefaultClaimGrace-5*time.Second {
		t.Errorf("a 5 s grace shortens the claim by %s, want %s", d, DefaultClaimGrace-5*time.Second)
	}
}

// TestAuditRecordIDsFollowTime checks that the records of calls made one
// after another get IDs in the order of their calls, the ID NewCallID
// gives for the record's time: the audit log's inserts then land at the
// end of its primary key's index, not on a random page each.
func TestAuditRecordIDsFollowTime(t *testing.T) {
	h, a := newIdemHarness(t, nil)
	for range 3 {
		if _, err := h.keyedCall(context.Background(), "echo", `{"q":"hi"}`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Microsecond) // IDs of one microsecond need not sort
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, r := range a.recs {
		prefix := mcpgate.NewCallID(r.Time)[:len("call_")+14] // the time's 7 bytes
		if !strings.HasPrefix(r.ID, prefix) {
			t.Errorf("record %d: ID %q does not start with its time's %q", i, r.ID, prefix)
		}
		if i > 0 && r.ID <= a.recs[i-1].ID {
			t.Errorf("record %d: ID %q not after %q", i, r.ID, a.recs[i-1].ID)
		}
	}
}
