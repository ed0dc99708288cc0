package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// The tools of the test agent a1.
const (
	echoSchema  = `{"type":"object","properties":{"q":{"type":"string"}}}`
	orderSchema = `{"type":"object","required":["customer","quantity"],"properties":{` +
		`"customer":{"type":"string"},"quantity":{"type":"integer","minimum":1},"priority":{"enum":["low","high"]}}}`
	reportOutput = `{"type":"object","required":["total"],"properties":{"total":{"type":"number"}}}`
)

// testSkills are a1's skills: auto-approved rest tools, a rest tool that
// needs approval, and an mcp tool.
func testSkills() []*mcpgate.Skill {
	in := json.RawMessage(echoSchema)
	return []*mcpgate.Skill{
		{AgentID: "a1", Name: "crm", Kind: mcpgate.SkillREST, AutoApprove: true, Tools: []*mcpgate.Tool{
			{Name: "echo", InputSchema: in},
			{Name: "order", InputSchema: json.RawMessage(orderSchema)},
			{Name: "report", InputSchema: in, OutputSchema: json.RawMessage(reportOutput)},
			{Name: "slow", InputSchema: in, Request: &mcpgate.Request{Method: "GET", Path: "/", Timeout: mcpgate.Duration(10 * time.Millisecond)}},
		}},
		{AgentID: "a1", Name: "gate", Kind: mcpgate.SkillREST, AutoApprove: false, Tools: []*mcpgate.Tool{
			{Name: "delete", InputSchema: in},
		}},
		{AgentID: "a1", Name: "up", Kind: mcpgate.SkillMCP, Prefix: "up_", AutoApprove: true, Timeout: mcpgate.Duration(5 * time.Second), Tools: []*mcpgate.Tool{
			{Name: "ping", InputSchema: in},
		}},
	}
}

// source is a registry.Source holding one agent's skills.
type source struct{ skills []*mcpgate.Skill }

func (source) Generation(context.Context) (int64, error) { return 1, nil }

func (source) ListAgents(context.Context, mcpgate.AgentFilter) ([]*mcpgate.Agent, error) {
	return []*mcpgate.Agent{{ID: "a1", OwnerID: "u1", MCPEnabled: true}}, nil
}

func (s source) ListSkills(context.Context, string) ([]*mcpgate.Skill, error) { return s.skills, nil }

// backendFunc adapts a function to mcpgate.Backend.
type backendFunc func(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error)

func (f backendFunc) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	return f(ctx, call)
}

// fakeBackend records the calls it gets and answers with fn, or with the
// call's arguments as text when fn is nil.
type fakeBackend struct {
	mu    sync.Mutex
	calls []string // "tool args"
	fn    backendFunc
}

func (b *fakeBackend) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	b.mu.Lock()
	b.calls = append(b.calls, call.Tool.Name+" "+string(call.Arguments))
	b.mu.Unlock()
	if b.fn != nil {
		return b.fn(ctx, call)
	}
	return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent(string(call.Arguments))}}, nil
}

func (b *fakeBackend) callLog() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

// progress is one progress notification.
type progress struct {
	Progress, Total float64
	Message         string
}

// recordingNotifier keeps the progress notifications of a call.
type recordingNotifier struct {
	mu     sync.Mutex
	events []progress
}

func (n *recordingNotifier) Progress(p, total float64, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, progress{p, total, msg})
}

func (n *recordingNotifier) Log(string, string, any) {}

func (n *recordingNotifier) progress() []progress {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]progress(nil), n.events...)
}

// observation is one ObserveCall.
type observation struct {
	Agent, Tool, Outcome string
	D                    time.Duration
}

// recorder keeps what the pipeline recorded.
type recorder struct {
	mu  sync.Mutex
	obs []observation
}

func (r *recorder) ObserveCall(agent, tool, outcome string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.obs = append(r.obs, observation{agent, tool, outcome, d})
}

func (r *recorder) observations() []observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]observation(nil), r.obs...)
}

// harness is a pipeline over agent a1 with a rest backend and no mcp
// backend.
type harness struct {
	p    *Pipeline
	rest *fakeBackend
	rec  *recorder
	logs *bytes.Buffer
}

func newHarness(tb testing.TB, rest backendFunc) *harness {
	tb.Helper()
	reg := mustRegistry(tb)
	h := &harness{rest: &fakeBackend{fn: rest}, rec: &recorder{}, logs: &bytes.Buffer{}}
	h.p = New(&Options{
		Tables:   reg,
		Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: h.rest},
		Recorder: h.rec,
		Logger:   slog.New(slog.NewTextHandler(h.logs, nil)),
	})
	return h
}

// mustRegistry returns a registry loaded with a1's skills.
func mustRegistry(tb testing.TB) *registry.Registry {
	tb.Helper()
	reg := registry.New(source{testSkills()}, nil)
	if err := reg.Reload(context.Background()); err != nil {
		tb.Fatalf("Reload: %v", err)
	}
	return reg
}

// call runs a tools/call of a1 and returns its notifier too.
func (h *harness) call(ctx context.Context, tool, args string) (*mcpgate.Result, *recordingNotifier, error) {
	n := &recordingNotifier{}
	c := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: tool, Notifier: n}
	if args != "" {
		c.Arguments = json.RawMessage(args)
	}
	res, err := h.p.Call(ctx, c)
	return res, n, err
}

func TestCall(t *testing.T) {
	h := newHarness(t, nil)
	n := &recordingNotifier{}
	call := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "echo", Arguments: json.RawMessage(`{"q":"hi"}`), Notifier: n}
	res, err := h.p.Call(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent(`{"q":"hi"}`)}}, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if call.Skill == nil || call.Skill.Name != "crm" || call.Tool == nil || call.Tool.Name != "echo" {
		t.Errorf("call not resolved: skill %v, tool %v", call.Skill, call.Tool)
	}
	if diff := cmp.Diff([]progress{{0, 1, "calling echo"}, {1, 1, "done"}}, n.progress()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]observation{{"a1", "echo", "ok", 0}}, h.rec.observations(), ignoreDuration()); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestCallArguments(t *testing.T) {
	tests := []struct{ name, args, want string }{
		{"absent", "", "{}"},
		{"null", "null", "{}"},
		{"empty object", "{}", "{}"},
		{"given", `{"q":"x"}`, `{"q":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if _, _, err := h.call(context.Background(), "echo", tt.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"echo " + tt.want}, h.rest.callLog()); diff != "" {
				t.Errorf("backend calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallFailures(t *testing.T) {
	plain := errors.New("connection reset")
	tests := []struct {
		name    string
		tool    string
		args    string
		backend backendFunc
		code    string // the error's code; "" for a result
		text    string // the error message, or the result's text
		called  bool   // whether the backend ran
		obs     observation
	}{
		{
			name: "unknown tool", tool: "nope",
			code: mcpgate.ENOTFOUND, text: `unknown tool "nope": tools/list shows the tools of agent "a1"`,
			obs: observation{"a1", "(unknown)", mcpgate.ENOTFOUND, 0},
		},
		{
			name: "invalid arguments", tool: "order", args: `{"quantity":0,"priority":"urgent","extra":1}`,
			text: "Invalid arguments for tool order:\n" +
				"- (arguments): missing property 'customer'\n" +
				"- /priority: value must be one of 'low', 'high'\n" +
				"- /quantity: minimum: got 0, want 1",
			obs: observation{"a1", "order", "tool_error", 0},
		},
		{
			name: "arguments not an object", tool: "echo", args: `[1]`,
			text: "Invalid arguments for tool echo:\n- (arguments): got array, want object",
			obs:  observation{"a1", "echo", "tool_error", 0},
		},
		{
			name: "arguments not JSON", tool: "echo", args: `{"q":`,
			text: "Invalid arguments for tool echo:\n- not valid JSON: unexpected EOF",
			obs:  observation{"a1", "echo", "tool_error", 0},
		},
		{
			name: "needs approval", tool: "delete",
			text: `Tool delete needs human approval (its skill "gate" sets auto_approve: false), and this gateway has no approval gate; the call was not made.`,
			obs:  observation{"a1", "delete", "tool_error", 0},
		},
		{
			name: "no backend for the kind", tool: "up_ping",
			code: mcpgate.EUNAVAILABLE, text: `no backend serves skills of kind "mcp"`,
			obs: observation{"a1", "up_ping", mcpgate.EUNAVAILABLE, 0},
		},
		{
			name: "tool error result", tool: "report", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
				return mcpgate.ErrorResult("upstream said 404"), nil
			},
			text: "upstream said 404",
			obs:  observation{"a1", "report", "tool_error", 0},
		},
		{
			name: "backend timed out", tool: "echo", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
				res := mcpgate.ErrorResult("The API did not answer in time.")
				res.Failure = mcpgate.ETIMEOUT
				return res, nil
			},
			text: "The API did not answer in time.",
			obs:  observation{"a1", "echo", mcpgate.ETIMEOUT, 0},
		},
		{
			name: "coded backend error", tool: "echo", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
				return nil, mcpgate.Errorf(mcpgate.ERATELIMIT, "slow down")
			},
			code: mcpgate.ERATELIMIT, text: "slow down",
			obs: observation{"a1", "echo", mcpgate.ERATELIMIT, 0},
		},
		{
			name: "internal backend error", tool: "echo", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) { return nil, plain },
			code:    mcpgate.EINTERNAL, text: "Internal error.",
			obs: observation{"a1", "echo", mcpgate.EINTERNAL, 0},
		},
		{
			name: "no result and no error", tool: "echo", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) { return nil, nil },
			code:    mcpgate.EINTERNAL, text: "Internal error.",
			obs: observation{"a1", "echo", mcpgate.EINTERNAL, 0},
		},
		{
			name: "no structured content", tool: "report", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
				return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("42")}}, nil
			},
			text: "Tool report declares an output schema, but the backend returned no structured content.",
			obs:  observation{"a1", "report", "tool_error", 0},
		},
		{
			name: "invalid structured content", tool: "report", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
				return &mcpgate.Result{StructuredContent: json.RawMessage(`{"total":"42","rows":[]}`)}, nil
			},
			text: "The response of tool report does not match its output schema:\n- /total: got string, want number",
			obs:  observation{"a1", "report", "tool_error", 0},
		},
		{
			name: "structured content not JSON", tool: "report", called: true,
			backend: func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
				return &mcpgate.Result{StructuredContent: json.RawMessage(`{"total":`)}, nil
			},
			text: "The response of tool report does not match its output schema:\n- not valid JSON: unexpected EOF",
			obs:  observation{"a1", "report", "tool_error", 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.backend)
			res, n, err := h.call(context.Background(), tt.tool, tt.args)
			if tt.code != "" {
				if res != nil || mcpgate.ErrorCode(err) != tt.code || mcpgate.ErrorMessage(err) != tt.text {
					t.Errorf("Call = %v, %v; want %s error %q", res, err, tt.code, tt.text)
				}
			} else {
				if err != nil {
					t.Fatalf("Call: %v", err)
				}
				if !res.IsError || len(res.Content) != 1 || res.Content[0].Text != tt.text {
					t.Errorf("result = %+v, want isError with text\n%s", res, tt.text)
				}
				// Invalid marks exactly the results of refused arguments.
				refused := strings.HasPrefix(tt.text, "Invalid arguments for tool")
				if (res.Invalid != nil) != refused || (refused && mcpgate.ErrorCode(res.Invalid) != mcpgate.EINVALID) {
					t.Errorf("result.Invalid = %v, want set: %v", res.Invalid, refused)
				}
			}
			if called := len(h.rest.callLog()) > 0; called != tt.called {
				t.Errorf("backend called = %v, want %v", called, tt.called)
			}
			if !tt.called && len(n.progress()) != 0 {
				t.Errorf("progress sent for a call that never reached a backend: %v", n.progress())
			}
			if diff := cmp.Diff([]observation{tt.obs}, h.rec.observations(), ignoreDuration()); diff != "" {
				t.Errorf("recorded (-want +got):\n%s", diff)
			}
			if logged := strings.Contains(h.logs.String(), "tool call failed"); logged != (tt.code == mcpgate.EINTERNAL) {
				t.Errorf("internal failure logged = %v, want %v; log %q", logged, !logged, h.logs.String())
			}
		})
	}
}

func TestCallUnknownAgent(t *testing.T) {
	h := newHarness(t, nil)
	n := &recordingNotifier{}
	_, err := h.p.Call(context.Background(), &mcpgate.Call{Agent: &mcpgate.Agent{ID: "zz"}, ToolName: "echo", Notifier: n})
	if mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND || mcpgate.ErrorMessage(err) != `agent "zz" not found` {
		t.Errorf("Call = %v, want ENOTFOUND for the agent", err)
	}
	if diff := cmp.Diff([]observation{{"zz", "(unknown)", mcpgate.ENOTFOUND, 0}}, h.rec.observations(), ignoreDuration()); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestCallOutputPasses(t *testing.T) {
	tests := []struct {
		name string
		res  *mcpgate.Result
	}{
		{"valid structured content", &mcpgate.Result{StructuredContent: json.RawMessage(`{"total":42.5}`)}},
		{"raw result untouched", &mcpgate.Result{Raw: json.RawMessage(`{"content":[],"structuredContent":{"total":"not a number"}}`)}},
		{"raw result without structured content", &mcpgate.Result{Raw: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) { return tt.res, nil })
			res, n, err := h.call(context.Background(), "report", "")
			if err != nil || res != tt.res {
				t.Errorf("Call = %+v, %v; want the backend's result unchanged", res, err)
			}
			if diff := cmp.Diff([]progress{{0, 1, "calling report"}, {1, 1, "done"}}, n.progress()); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallDeadline(t *testing.T) {
	tests := []struct {
		tool string
		want time.Duration
	}{
		{"slow", 10*time.Millisecond + deadlineGrace},         // the tool's request timeout
		{"echo", mcpgate.DefaultSkillTimeout + deadlineGrace}, // the default
		{"up_ping", 5*time.Second + deadlineGrace},            // the skill's timeout
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got time.Duration
				h := newHarness(t, func(ctx context.Context, _ *mcpgate.Call) (*mcpgate.Result, error) {
					d, ok := ctx.Deadline()
					if !ok {
						return nil, errors.New("no deadline")
					}
					got = time.Until(d)
					return &mcpgate.Result{}, nil
				})
				h.p.opts.Backends[mcpgate.SkillMCP] = h.rest
				if _, _, err := h.call(context.Background(), tt.tool, ""); err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("backend deadline in %s, want %s", got, tt.want)
				}
			})
		})
	}
}

// selfTimedBackend is a backend that says it ends its calls at their
// skill's timeout itself.
type selfTimedBackend struct{ backendFunc }

func (selfTimedBackend) EndsCallsAtTimeout() bool { return true }

func TestCallDeadlineOfSelfTimedBackend(t *testing.T) {
	tests := []struct {
		tool string
		want time.Duration // 0: no deadline
	}{
		{"echo", 0},    // the skill's timeout: the backend's own
		{"up_ping", 0}, // the same
		{"slow", 10*time.Millisecond + deadlineGrace}, // a tool's timeout of its own: the pipeline's
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got time.Duration
				h := newHarness(t, nil)
				backend := selfTimedBackend{func(ctx context.Context, _ *mcpgate.Call) (*mcpgate.Result, error) {
					if d, ok := ctx.Deadline(); ok {
						got = time.Until(d)
					}
					return &mcpgate.Result{}, nil
				}}
				h.p.opts.Backends[mcpgate.SkillREST] = backend
				h.p.opts.Backends[mcpgate.SkillMCP] = backend
				if _, _, err := h.call(context.Background(), tt.tool, ""); err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("backend deadline in %s, want %s (0: none)", got, tt.want)
				}
			})
		})
	}
}

func TestCallTimeout(t *testing.T) {
	tests := []struct {
		name    string
		backend backendFunc
	}{
		{"backend honors ctx", func(ctx context.Context, _ *mcpgate.Call) (*mcpgate.Result, error) {
			<-ctx.Done()
			return nil, fmt.Errorf("send request: %w", ctx.Err())
		}},
		{"backend honors ctx with a plain error", func(ctx context.Context, _ *mcpgate.Call) (*mcpgate.Result, error) {
			<-ctx.Done()
			return nil, errors.New("gave up")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tt.backend)
				start := time.Now()
				res, n, err := h.call(context.Background(), "slow", "")
				if res != nil || mcpgate.ErrorCode(err) != mcpgate.ETIMEOUT || mcpgate.ErrorMessage(err) != "tool slow did not answer within 10ms" {
					t.Errorf("Call = %v, %v; want ETIMEOUT", res, err)
				}
				if d := time.Since(start); d != 10*time.Millisecond+deadlineGrace {
					t.Errorf("Call returned after %s, want at the deadline", d)
				}
				if diff := cmp.Diff([]progress{{0, 1, "calling slow"}}, n.progress()); diff != "" {
					t.Errorf("progress (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]observation{{"a1", "slow", mcpgate.ETIMEOUT, 0}}, h.rec.observations(), ignoreDuration()); diff != "" {
					t.Errorf("recorded (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestCallBackendTimeout checks that a backend's own ETIMEOUT, sent before
// the pipeline's deadline, reaches the caller as it is.
func TestCallBackendTimeout(t *testing.T) {
	h := newHarness(t, func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return nil, mcpgate.Errorf(mcpgate.ETIMEOUT, "upstream did not answer within 10ms")
	})
	_, _, err := h.call(context.Background(), "slow", "")
	if mcpgate.ErrorCode(err) != mcpgate.ETIMEOUT || mcpgate.ErrorMessage(err) != "upstream did not answer within 10ms" {
		t.Errorf("Call = %v, want the backend's ETIMEOUT", err)
	}
}

func TestCallCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		h := newHarness(t, func(ctx context.Context, _ *mcpgate.Call) (*mcpgate.Result, error) {
			cancel() // the client goes away while the backend runs
			<-ctx.Done()
			return nil, fmt.Errorf("send request: %w", ctx.Err())
		})
		start := time.Now()
		_, _, err := h.call(ctx, "echo", "")
		if mcpgate.ErrorCode(err) != mcpgate.ECANCELED {
			t.Errorf("Call = %v, want ECANCELED", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Call returned %s after the caller left, want at once", d)
		}
		if strings.Contains(h.logs.String(), "tool call failed") {
			t.Errorf("a canceled call was logged as a failure: %q", h.logs.String())
		}
	})
}

func TestCallRecordsDuration(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	reg := mustRegistry(t)
	rec := &recorder{}
	p := New(&Options{
		Tables: reg,
		Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: backendFunc(func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
			mu.Lock()
			now = now.Add(1500 * time.Millisecond)
			mu.Unlock()
			return &mcpgate.Result{}, nil
		})},
		Recorder: rec,
		Now:      clock,
	})
	if _, err := p.Call(context.Background(), &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "echo", Notifier: mcpgate.NopNotifier{}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]observation{{"a1", "echo", "ok", 1500 * time.Millisecond}}, rec.observations()); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

// TestCallWithoutRecorder checks that the recorder and logger are optional.
func TestCallWithoutRecorder(t *testing.T) {
	reg := mustRegistry(t)
	p := New(&Options{Tables: reg})
	_, err := p.Call(context.Background(), &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "echo", Notifier: mcpgate.NopNotifier{}})
	if mcpgate.ErrorCode(err) != mcpgate.EUNAVAILABLE {
		t.Errorf("Call = %v, want EUNAVAILABLE", err)
	}
}

func BenchmarkPipelineCall(b *testing.B) {
	reg := mustRegistry(b)
	trivial := backendFunc(func(context.Context, *mcpgate.Call) (*mcpgate.Result, error) {
		return &mcpgate.Result{Content: []mcpgate.Content{mcpgate.TextContent("ok")}}, nil
	})
	p := New(&Options{Tables: reg, Backends: map[mcpgate.SkillKind]mcpgate.Backend{mcpgate.SkillREST: trivial}, Recorder: nopRecorder{}})
	agent := &mcpgate.Agent{ID: "a1"}
	args := json.RawMessage(`{"customer":"ACME Corp","quantity":12,"priority":"high"}`)
	b.ReportAllocs()
	for b.Loop() {
		call := &mcpgate.Call{Agent: agent, ToolName: "order", Arguments: args, Notifier: mcpgate.NopNotifier{}}
		if _, err := p.Call(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

// nopRecorder drops observations.
type nopRecorder struct{}

func (nopRecorder) ObserveCall(string, string, string, time.Duration) {}

// ignoreDuration compares observations without their durations.
func ignoreDuration() cmp.Option {
	return cmp.Comparer(func(a, b observation) bool {
		return a.Agent == b.Agent && a.Tool == b.Tool && a.Outcome == b.Outcome
	})
}

// reportingBackend is a fake backend that reports its calls' progress
// itself, as upstream servers and agents do.
type reportingBackend struct{ *fakeBackend }

func (reportingBackend) ReportsProgress() bool { return true }

// A relayed call reports only its backend's own progress: the pipeline's
// start and end would interleave with the upstream's sequence.
func TestRelayedCallProgressIsTheBackends(t *testing.T) {
	h := newHarness(t, nil)
	up := reportingBackend{&fakeBackend{fn: func(_ context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
		call.Notifier.Progress(50, 100, "half")
		return &mcpgate.Result{Raw: json.RawMessage(`{"content":[]}`)}, nil
	}}}
	h.p.opts.Backends[mcpgate.SkillMCP] = up
	_, n, err := h.call(context.Background(), "up_ping", `{"q":"x"}`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]progress{{50, 100, "half"}}, n.progress()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}
