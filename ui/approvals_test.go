package ui_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/ui"
)

// decider decides approvals in the store, as the gateway's decider does
// (which also wakes the waiting call).
type decider struct{ store mcpgate.ApprovalStore }

func (d *decider) Decide(ctx context.Context, id string, dec mcpgate.Decision) (*mcpgate.Approval, error) {
	return d.store.DecideApproval(ctx, id, dec)
}

// hub is the event hub's approval half: it tells a pending approval to
// those who listen for requests, a decided one to those who listen for
// decisions.
type hub struct {
	mu                 sync.Mutex
	requested, decided []func(*mcpgate.Approval)
}

func (h *hub) OnApprovalRequested(f func(*mcpgate.Approval)) {
	h.mu.Lock()
	h.requested = append(h.requested, f)
	h.mu.Unlock()
}
func (h *hub) OnApprovalDecided(f func(*mcpgate.Approval)) {
	h.mu.Lock()
	h.decided = append(h.decided, f)
	h.mu.Unlock()
}

func (h *hub) publish(a *mcpgate.Approval) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.decided
	if a.State == mcpgate.ApprovalPending {
		subs = h.requested
	}
	for _, f := range subs {
		f(a)
	}
}

// mustApproval stores a pending approval of an agent's skill, four and a
// half minutes from its deadline.
func (f *fixture) mustApproval(t *testing.T, agentID, skill string) *mcpgate.Approval {
	t.Helper()
	a := &mcpgate.Approval{AgentID: agentID, Skill: skill, Tool: "delete_" + agentID, Identity: "user:usr_x",
		Arguments: []byte(`{"order":42}`), Deadline: time.Now().Add(4*time.Minute + 30*time.Second)}
	if err := f.store.CreateApproval(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

// mustSkill stores a skill of an agent with its approvers.
func (f *fixture) mustSkill(t *testing.T, agentID, name string, approvers ...string) {
	t.Helper()
	sk := &mcpgate.Skill{AgentID: agentID, Name: name, Kind: mcpgate.SkillMCP, URL: "http://127.0.0.1:1/mcp", Approvers: approvers, Source: mcpgate.SourceCLI}
	if err := f.store.PutSkill(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
}

// withGate wires the approval gate over the fixture's store.
func withGate(o *ui.Options) { o.Approvals = &decider{store: o.Store.(mcpgate.ApprovalStore)} }

// TestApprovalsQueue shows alice the pending approvals of her agent, and
// those of bob's skill that names her among its approvers, with their
// arguments as formatted JSON and the time left; lets her reject one with
// a reason through the form; refuses bob's decision on hers; and tells a
// second reviewer who comes too late who decided first (409).
func TestApprovalsQueue(t *testing.T) {
	f := mustFixture(t, withGate)
	f.mustSkill(t, "bobs", "ops", "alice")
	f.mustSkill(t, "bobs", "secret")
	mine, ops, secret := f.mustApproval(t, "shop", "files"), f.mustApproval(t, "bobs", "ops"), f.mustApproval(t, "bobs", "secret")
	alice := f.mustSignIn(t, "alice")
	page := mustGet(t, alice, "/ui/approvals/")
	mustContain(t, page, "<code>delete_shop</code> on agent shop", "<code>delete_bobs</code> on agent bobs", "&#34;order&#34;: 42",
		"user:usr_x", "4m", `id="approval-`+ops.ID+`"`, `<script src="/ui/static/approvals.js" defer>`)
	if strings.Contains(page, secret.ID) {
		t.Fatal("alice sees an approval of bob's skill that does not name her")
	}
	mustContain(t, mustGet(t, alice, "/ui/"), "<strong>2</strong> pending approvals")
	bob := f.mustSignIn(t, "bob")
	if st, _, _ := bob.submit(t, "/ui/approvals/", "/ui/approvals/"+mine.ID+"/approve", url.Values{}); st != http.StatusNotFound {
		t.Fatalf("bob deciding alice's approval: %d, want 404", st)
	}
	st, _, loc := alice.submit(t, "/ui/approvals/", "/ui/approvals/"+mine.ID+"/reject", url.Values{"reason": {" wrong order "}})
	if st != http.StatusSeeOther || loc != "/ui/approvals/" {
		t.Fatalf("reject: %d → %q", st, loc)
	}
	got, err := f.store.FindApproval(context.Background(), mine.ID)
	if err != nil || got.State != mcpgate.ApprovalRejected || got.Reviewer != "alice" || got.Reason != "wrong order" {
		t.Fatalf("decision = %+v, %v", got, err)
	}
	st, body, _ := f.mustSignIn(t, "root").submit(t, "/ui/approvals/", "/ui/approvals/"+mine.ID+"/approve", url.Values{})
	if st != http.StatusConflict {
		t.Fatalf("a late decision: %d, want 409", st)
	}
	mustContain(t, body, "Too late: the call of delete_shop on agent shop was rejected by alice at ", "Your decision was not recorded.")
	if st, _, _ := alice.submit(t, "/ui/approvals/", "/ui/approvals/"+ops.ID+"/approve", url.Values{}); st != http.StatusSeeOther {
		t.Fatalf("alice approving as an approver of bob's skill: %d", st)
	}
	if st, _, _ := alice.post(t, "/ui/approvals/"+secret.ID+"/approve", url.Values{"csrf": {"forged"}}); st == http.StatusSeeOther {
		t.Fatal("a form without its CSRF token was accepted")
	}
}

// TestApprovalsOff says there is no gate, and serves no stream.
func TestApprovalsOff(t *testing.T) {
	f := mustFixture(t, nil)
	alice := f.mustSignIn(t, "alice")
	mustContain(t, mustGet(t, alice, "/ui/approvals/"), "This gateway has no approval gate.")
	if st, _ := alice.get(t, "/ui/approvals/events"); st != http.StatusServiceUnavailable {
		t.Fatalf("events without a gate: %d", st)
	}
}

// events reads a browser's approval stream.
type events struct {
	resp *http.Response
	r    *bufio.Reader
}

// mustEvents opens the browser's approval stream.
func (b *browser) mustEvents(t *testing.T) *events {
	t.Helper()
	resp, err := b.client.Get(b.f.http.URL + "/ui/approvals/events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &events{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next returns the next event's data, skipping comments and fields
// other than data; "" at the stream's end.
func (e *events) next(t *testing.T) string {
	t.Helper()
	for {
		line, err := e.r.ReadString('\n')
		if err != nil {
			return ""
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(data)
		}
	}
}

// TestApprovalsLive streams to each signed-in browser the approvals it may
// decide as they are asked for and decided, and nothing of others';
// Close ends the streams and refuses new ones.
func TestApprovalsLive(t *testing.T) {
	h := &hub{}
	f := mustFixture(t, func(o *ui.Options) { withGate(o); o.Events = h })
	f.mustSkill(t, "bobs", "ops", "alice")
	f.mustSkill(t, "bobs", "secret")
	alice := f.mustSignIn(t, "alice")
	stream := alice.mustEvents(t)
	if st, _ := f.newBrowser(t).get(t, "/ui/approvals/events"); st != http.StatusUnauthorized {
		t.Fatalf("events signed out: %d, want 401", st)
	}
	secret, ops := f.mustApproval(t, "bobs", "secret"), f.mustApproval(t, "bobs", "ops")
	h.publish(secret) // not alice's: the stream skips it
	h.publish(ops)
	if got, want := stream.next(t), `{"id":"`+ops.ID+`","state":"pending"}`; got != want {
		t.Fatalf("event %s, want %s", got, want)
	}
	decided, err := f.store.DecideApproval(context.Background(), ops.ID, mcpgate.Decision{State: mcpgate.ApprovalApproved, Reviewer: "root"})
	if err != nil {
		t.Fatal(err)
	}
	h.publish(decided)
	if got, want := stream.next(t), `{"id":"`+ops.ID+`","state":"approved"}`; got != want {
		t.Fatalf("event %s, want %s", got, want)
	}
	f.ui.Close()
	if got := stream.next(t); got != "" {
		t.Fatalf("after Close the stream sent %s", got)
	}
	if st, _ := alice.get(t, "/ui/approvals/events"); st != http.StatusServiceUnavailable {
		t.Fatalf("events after Close: %d, want 503", st)
	}
}
