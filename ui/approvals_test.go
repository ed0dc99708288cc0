package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/ui"
)

// queue is an ApprovalLister over a fixed list that records decisions.
type queue struct {
	mu        sync.Mutex
	list      []*mcpgate.Approval
	decisions map[string]mcpgate.Decision
}

func (q *queue) CountPendingApprovals(ctx context.Context, agentIDs []string) (int, error) {
	l, err := q.ListPendingApprovals(ctx, agentIDs)
	return len(l), err
}

func (q *queue) ListPendingApprovals(_ context.Context, agentIDs []string) ([]*mcpgate.Approval, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*mcpgate.Approval
	for _, a := range q.list {
		if _, done := q.decisions[a.ID]; !done && (agentIDs == nil || slices.Contains(agentIDs, a.AgentID)) {
			out = append(out, a)
		}
	}
	return out, nil
}

func (q *queue) DecideApproval(_ context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, done := q.decisions[id]; done {
		return nil, mcpgate.Errorf(mcpgate.ECONFLICT, "decided")
	}
	q.decisions[id] = d
	return &mcpgate.Approval{ID: id, State: d.State}, nil
}

// TestApprovalsQueue shows alice the pending approvals of her agent with
// their arguments as formatted JSON and the time left, lets her reject one
// with a reason through the form, and refuses bob's decision on hers.
func TestApprovalsQueue(t *testing.T) {
	deadline := time.Now().Add(4*time.Minute + 30*time.Second)
	q := &queue{decisions: map[string]mcpgate.Decision{}, list: []*mcpgate.Approval{
		{ID: "apr_1", AgentID: "shop", Tool: "delete_order", Identity: "user:usr_x", Arguments: []byte(`{"order":42}`), Deadline: deadline},
		{ID: "apr_2", AgentID: "bobs", Tool: "drop_table", Identity: "user:usr_y", Arguments: []byte(`{}`), Deadline: deadline},
	}}
	f := mustFixture(t, func(o *ui.Options) { o.Approvals = q })
	alice := f.mustSignIn(t, "alice")
	page := mustGet(t, alice, "/ui/approvals/")
	mustContain(t, page, "<code>delete_order</code> on agent shop", "&#34;order&#34;: 42", "user:usr_x", "left")
	if strings.Contains(page, "drop_table") {
		t.Fatal("alice sees an approval of bob's agent")
	}
	bob := f.mustSignIn(t, "bob")
	if st, _, _ := bob.submit(t, "/ui/approvals/", "/ui/approvals/apr_1/approve", url.Values{}); st != http.StatusNotFound {
		t.Fatalf("bob deciding alice's approval: %d, want 404", st)
	}
	st, _, loc := alice.submit(t, "/ui/approvals/", "/ui/approvals/apr_1/reject", url.Values{"reason": {"wrong order"}})
	if st != http.StatusSeeOther || loc != "/ui/approvals/" {
		t.Fatalf("reject: %d → %q", st, loc)
	}
	if d := q.decisions["apr_1"]; d.State != mcpgate.ApprovalRejected || d.Reviewer != "alice" || d.Reason != "wrong order" {
		t.Fatalf("decision = %+v", d)
	}
	if st, _, _ := alice.post(t, "/ui/approvals/apr_2/approve", url.Values{"csrf": {"forged"}}); st == http.StatusSeeOther {
		t.Fatal("a form without its CSRF token was accepted")
	}
}
