package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// fakeClient is a client that answers elicitation/create with answer (or
// err), keeping the params it was sent; answer "" waits until ctx ends.
type fakeClient struct {
	caps   string
	answer string
	err    error
	mu     sync.Mutex
	asked  []json.RawMessage
}

func (c *fakeClient) ClientCapabilities() json.RawMessage { return json.RawMessage(c.caps) }

func (c *fakeClient) RequestClient(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	c.asked = append(c.asked, params)
	c.mu.Unlock()
	if method != "elicitation/create" {
		return nil, &mcpgate.RPCError{Code: -32601, Message: "no " + method}
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.answer == "" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return json.RawMessage(c.answer), nil
}

// newCallerHarness is a gate harness whose skill files asks the caller,
// waiting for at most wait.
func newCallerHarness(tb testing.TB, wait time.Duration) *gateHarness {
	g := newGateHarness(tb)
	in := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	reg := registry.New(source{[]*mcpgate.Skill{
		{AgentID: "a1", Name: "files", Kind: mcpgate.SkillREST, Approval: mcpgate.ApprovalCaller, ApprovalTimeout: mcpgate.Duration(wait),
			Tools: []*mcpgate.Tool{{Name: "delete", InputSchema: in}}},
	}}, nil)
	if err := reg.Reload(context.Background()); err != nil {
		tb.Fatal(err)
	}
	g.p.opts.Tables = reg
	return g
}

// callerCall calls delete with client c.
func (g *gateHarness) callerCall(ctx context.Context, c *fakeClient, args string) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		call := &mcpgate.Call{Agent: &mcpgate.Agent{ID: "a1"}, ToolName: "delete", Arguments: json.RawMessage(args),
			Caller: mcpgate.Caller{Identity: "user:u1", UserID: "u1"}, Notifier: mcpgate.NopNotifier{}, Client: c}
		res, err := g.p.Call(ctx, call)
		out <- outcome{res, err}
	}()
	return out
}

// TestApprovalCaller: with approval: caller and a client that declared
// elicitation, the calling user confirms or declines the call itself; no
// approval is asked of a reviewer.
func TestApprovalCaller(t *testing.T) {
	for name, tc := range map[string]struct {
		answer string
		runs   bool
	}{
		"accept":           {`{"action":"accept","content":{"confirm":true}}`, true},
		"accept unchecked": {`{"action":"accept","content":{"confirm":false}}`, false},
		"decline":          {`{"action":"decline"}`, false},
		"cancel":           {`{"action":"cancel"}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			g := newCallerHarness(t, time.Minute)
			c := &fakeClient{caps: `{"elicitation":{}}`, answer: tc.answer}
			o := <-g.callerCall(context.Background(), c, `{"path":"/tmp/c"}`)
			if o.err != nil {
				t.Fatal(o.err)
			}
			ran := len(g.rest.callLog()) == 1
			if ran != tc.runs || o.res.IsError == tc.runs {
				t.Fatalf("backend ran %v, result %+v; want ran %v", ran, o.res, tc.runs)
			}
			if !tc.runs && resultText(o.res) != "Call to delete was declined by the caller" {
				t.Fatalf("declined: %q", resultText(o.res))
			}
			if g.approvals.count() != 0 {
				t.Fatal("a reviewer was asked too")
			}
			var p struct {
				Message string
				Schema  struct {
					Properties map[string]struct{ Type string }
					Required   []string
				} `json:"requestedSchema"`
			}
			if len(c.asked) != 1 || json.Unmarshal(c.asked[0], &p) != nil {
				t.Fatalf("asked %s", c.asked)
			}
			if !strings.Contains(p.Message, "delete") || !strings.Contains(p.Message, `"path": "/tmp/c"`) ||
				p.Schema.Properties["confirm"].Type != "boolean" || len(p.Schema.Required) != 1 {
				t.Fatalf("elicitation params %s", c.asked[0])
			}
		})
	}
}

// TestApprovalCallerFallsBack: a client that did not declare elicitation
// in form mode, or refuses the request, leaves the call to the reviewers.
func TestApprovalCallerFallsBack(t *testing.T) {
	for name, c := range map[string]*fakeClient{
		"no capability": {caps: `{"sampling":{}}`},
		"url mode only": {caps: `{"elicitation":{"url":{}}}`},
		"refused":       {caps: `{"elicitation":{"form":{}}}`, err: &mcpgate.RPCError{Code: -32601, Message: "no"}},
		"unreachable":   {caps: `{"elicitation":{}}`, err: mcpgate.Errorf(mcpgate.EUNAVAILABLE, "no stream")},
	} {
		t.Run(name, func(t *testing.T) {
			g := newCallerHarness(t, time.Minute)
			done := g.callerCall(context.Background(), c, `{"path":"/x"}`)
			g.decide(t, <-g.approvals.created, mcpgate.ApprovalApproved, "")
			if o := <-done; o.err != nil || o.res.IsError || len(g.rest.callLog()) != 1 {
				t.Fatalf("after a reviewer's approve: %+v, %v", o.res, o.err)
			}
		})
	}
}

// TestApprovalCallerTimeout: no answer within the approval timeout
// rejects the call.
func TestApprovalCallerTimeout(t *testing.T) {
	g := newCallerHarness(t, 20*time.Millisecond)
	o := <-g.callerCall(context.Background(), &fakeClient{caps: `{"elicitation":{}}`}, `{}`)
	if o.err != nil || resultText(o.res) != "rejected: no decision within 20ms" || len(g.rest.callLog()) != 0 {
		t.Fatalf("%+v, %v", o.res, o.err)
	}
	if got := g.audit.outcomes(); len(got) != 1 || got[0] != mcpgate.OutcomeRejected {
		t.Fatalf("audit outcomes = %q", got)
	}
}

// TestApprovalCallerSignsAfterConfirm: the caller is shown the file IDs it
// sent, not signed URLs, and the backend gets URLs signed after the
// confirmation.
func TestApprovalCallerSignsAfterConfirm(t *testing.T) {
	g := newCallerHarness(t, time.Minute)
	files := &signingFiles{}
	g.p.opts.Attachments = files
	c := &fakeClient{caps: `{"elicitation":{"form":{}}}`, answer: `{"action":"accept","content":{"confirm":true}}`}
	o := <-g.callerCall(context.Background(), c, `{"path":"/a","attachments":[{"file_id":"f1"}]}`)
	if o.err != nil || o.res.IsError {
		t.Fatalf("%+v, %v", o.res, o.err)
	}
	if strings.Contains(string(c.asked[0]), "sig=") {
		t.Fatalf("the caller was shown a signed URL: %s", c.asked[0])
	}
	if got := g.rest.callLog(); len(got) != 1 || !strings.Contains(got[0], "sig=2") {
		t.Fatalf("backend calls %q; want the URL signed after the confirmation (sig=2)", got)
	}
}
