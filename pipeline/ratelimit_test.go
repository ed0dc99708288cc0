package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/ratelimit"
	"github.com/mcpgate/mcpgate/registry"
)

// limitedSkills are a1's skills with rate limits: one of its own on skill
// "metered" and one on its tool "dear", none on skill "free".
func limitedSkills() []*mcpgate.Skill {
	in := json.RawMessage(echoSchema)
	return []*mcpgate.Skill{
		{AgentID: "a1", Name: "metered", Kind: mcpgate.SkillREST, AutoApprove: true,
			RateLimit: &mcpgate.RateLimit{PerMinute: 60, Burst: 2}, Tools: []*mcpgate.Tool{
				{Name: "cheap", InputSchema: in},
				{Name: "dear", InputSchema: in, RateLimit: &mcpgate.RateLimit{PerMinute: 1, Burst: 1}},
			}},
		{AgentID: "a1", Name: "free", Kind: mcpgate.SkillREST, AutoApprove: true, Tools: []*mcpgate.Tool{
			{Name: "echo", InputSchema: in},
		}},
	}
}

// fakeLimiter records what it is asked and refuses with wait once a key
// has been asked more than allow times.
type fakeLimiter struct {
	mu    sync.Mutex
	asked map[string]int
	seen  map[string]mcpgate.RateLimit
	allow int
	wait  time.Duration
	err   error
}

func (f *fakeLimiter) Allow(_ context.Context, key string, limit mcpgate.RateLimit) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[key]++
	f.seen[key] = limit
	if f.err != nil {
		return 0, f.err
	}
	if f.asked[key] > f.allow {
		return f.wait, nil
	}
	return 0, nil
}

// limitCounter counts refusals by agent.
type limitCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *limitCounter) RateLimited(agent string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[agent]++
}

// limitedHarness is a pipeline over limitedSkills with lim and a default
// limit of 10 a minute.
func limitedHarness(t *testing.T, lim Limiter) (*harness, *limitCounter) {
	t.Helper()
	reg := registry.New(source{limitedSkills()}, nil)
	if err := reg.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := &harness{rest: &fakeBackend{}, rec: &recorder{}}
	counter := &limitCounter{n: map[string]int{}}
	h.p = New(&Options{
		Tables: reg, Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest}, Recorder: h.rec,
		Limiter: lim, DefaultRateLimit: &mcpgate.RateLimit{PerMinute: 10, Burst: 5}, LimitRecorder: counter,
	})
	return h, counter
}

// callAs runs a tools/call of a1 with a user key of user.
func (h *harness) callAs(user, tool, args string) (*mcpgate.Result, error) {
	return h.p.Call(context.Background(), &mcpgate.Call{
		Agent: &mcpgate.Agent{ID: "a1"}, ToolName: tool, Arguments: json.RawMessage(args),
		Caller: (&mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k1", UserID: user}).Caller(), Notifier: mcpgate.NopNotifier{},
	})
}

// TestRateLimitKeys checks which limit applies to each call and which
// bucket it spends: the tool's, the skill's, or the default, per caller.
func TestRateLimitKeys(t *testing.T) {
	lim := &fakeLimiter{asked: map[string]int{}, seen: map[string]mcpgate.RateLimit{}, allow: 100}
	h, _ := limitedHarness(t, lim)
	for _, c := range []struct{ user, tool string }{{"u1", "cheap"}, {"u1", "dear"}, {"u1", "echo"}, {"u2", "echo"}, {"u1", "cheap"}} {
		if _, err := h.callAs(c.user, c.tool, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]mcpgate.RateLimit{
		"user:u1\na1\nmetered":       {PerMinute: 60, Burst: 2},
		"user:u1\na1\nmetered\ndear": {PerMinute: 1, Burst: 1},
		"user:u1\na1":                {PerMinute: 10, Burst: 5},
		"user:u2\na1":                {PerMinute: 10, Burst: 5},
	}
	if diff := cmp.Diff(want, lim.seen); diff != "" {
		t.Errorf("limits by bucket (-want +got):\n%s", diff)
	}
	if lim.asked["user:u1\na1\nmetered"] != 2 {
		t.Errorf("the skill's bucket was asked %d times, want 2", lim.asked["user:u1\na1\nmetered"])
	}
}

// TestRateLimited checks a refused call: ERATELIMIT with the wait rounded
// up to whole milliseconds, before validation (bad arguments do not
// matter), no backend call, the outcome recorded and the refusal counted.
func TestRateLimited(t *testing.T) {
	lim := &fakeLimiter{asked: map[string]int{}, seen: map[string]mcpgate.RateLimit{}, allow: 1, wait: 2500*time.Millisecond + 1}
	h, counter := limitedHarness(t, lim)
	if _, err := h.callAs("u1", "cheap", `{}`); err != nil {
		t.Fatal(err)
	}
	res, err := h.callAs("u1", "cheap", `{"q":7}`)
	var e *mcpgate.Error
	if !errors.As(err, &e) || e.Code != mcpgate.ERATELIMIT || e.RetryAfterMS != 2501 || res != nil {
		t.Fatalf("second call: %v, %v; want ERATELIMIT with 2501 ms", res, err)
	}
	if want := "Rate limit reached: at most 60 calls a minute (burst 2) of tool cheap; retry in 2501 ms."; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	if n := len(h.rest.callLog()); n != 1 {
		t.Errorf("the backend got %d calls, want 1", n)
	}
	obs := h.rec.observations()
	if obs[1].Outcome != mcpgate.ERATELIMIT || counter.n["a1"] != 1 {
		t.Errorf("recorded %+v and %v refusals", obs, counter.n)
	}
}

// TestRateLimitError checks that a limiter's failure fails the call.
func TestRateLimitError(t *testing.T) {
	lim := &fakeLimiter{asked: map[string]int{}, seen: map[string]mcpgate.RateLimit{}, err: errors.New("database down")}
	h, _ := limitedHarness(t, lim)
	if _, err := h.callAs("u1", "cheap", `{}`); mcpgate.ErrorCode(err) != mcpgate.EINTERNAL {
		t.Fatalf("err %v, want an internal error", err)
	}
}

// TestNoDefaultLimit checks that without a default, a tool of a skill
// without a limit is never limited.
func TestNoDefaultLimit(t *testing.T) {
	lim := &fakeLimiter{asked: map[string]int{}, seen: map[string]mcpgate.RateLimit{}}
	h, _ := limitedHarness(t, lim)
	h.p.opts.DefaultRateLimit = nil
	for range 3 {
		if _, err := h.callAs("u1", "echo", `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if len(lim.asked) != 0 {
		t.Errorf("the limiter was asked %v", lim.asked)
	}
}

// BenchmarkPipelineCallRateLimited is BenchmarkPipelineCall with the
// in-memory limiter on a limit never reached.
func BenchmarkPipelineCallRateLimited(b *testing.B) {
	reg := mustRegistry(b)
	trivial := backendFunc(func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	p := New(&Options{Tables: reg, Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: trivial}, Recorder: nopRecorder{},
		Limiter: ratelimit.NewMemory(nil), DefaultRateLimit: &mcpgate.RateLimit{PerMinute: 1 << 40, Burst: 1 << 30}})
	agent := &mcpgate.Agent{ID: "a1"}
	cred := &mcpgate.Credential{Kind: mcpgate.CredentialUserKey, ID: "k1", UserID: "u1"}
	args := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high"}`)
	b.ReportAllocs()
	for b.Loop() {
		call := &mcpgate.Call{Agent: agent, ToolName: "order", Arguments: args, Caller: cred.Caller(), Notifier: mcpgate.NopNotifier{}}
		if _, err := p.Call(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}
