package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// storeDecider decides through the store alone.
type storeDecider struct{ store mcpgate.ApprovalStore }

func (d storeDecider) Decide(ctx context.Context, id string, dec mcpgate.Decision) (*mcpgate.Approval, error) {
	return d.store.DecideApproval(ctx, id, dec)
}

// mustApproval stores a pending approval of the agent's tool echo.
func (f *apiFixture) mustApproval(tb testing.TB, agentID string) *mcpgate.Approval {
	tb.Helper()
	a := &mcpgate.Approval{AgentID: agentID, Skill: "api", Tool: "echo", Arguments: []byte(`{"text":"hi"}`), ArgsHash: "h",
		Identity: "user:x", RequestedAt: time.Now(), Deadline: time.Now().Add(time.Minute)}
	if err := f.store.CreateApproval(context.Background(), a); err != nil {
		tb.Fatal(err)
	}
	return a
}

// approvalIDs lists the approvals a key may decide.
func (f *apiFixture) approvalIDs(tb testing.TB, key, query string) []string {
	tb.Helper()
	var out struct{ Approvals []*mcpgate.Approval }
	f.call(tb, "GET", "/api/v1/approvals"+query, key, "").want(tb, http.StatusOK).decode(tb, &out)
	var ids []string
	for _, a := range out.Approvals {
		ids = append(ids, a.ID)
	}
	return ids
}

// TestApprovalsAPI lists approvals by reviewer (owner, approvers, admins),
// decides one with a reason and answers 409 to a late second decision.
func TestApprovalsAPI(t *testing.T) {
	f := mustAPIFixture(t)
	f.srv.opts.Approvals = storeDecider{f.store}
	shop, bobs := f.mustApproval(t, "shop"), f.mustApproval(t, "bobs")
	mustIDs := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) || (len(want) > 0 && got[0] != want[0]) || (len(want) > 1 && got[1] != want[1]) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
	}
	mustIDs("alice", f.approvalIDs(t, f.alice, ""), shop.ID)
	mustIDs("bob", f.approvalIDs(t, f.bob, "?state=pending"), bobs.ID)
	mustIDs("root", f.approvalIDs(t, f.root, ""), bobs.ID, shop.ID)
	mustIDs("root, agent shop", f.approvalIDs(t, f.root, "?agent=shop"), shop.ID)
	f.call(t, "GET", "/api/v1/approvals", f.shopKey, "").want(t, http.StatusForbidden)
	f.call(t, "GET", "/api/v1/approvals?state=maybe", f.root, "").wantError(t, http.StatusBadRequest, "invalid", "state", "pending")

	f.call(t, "POST", "/api/v1/approvals/"+shop.ID+"/approve", f.bob, "").wantError(t, http.StatusNotFound, "not_found", "", "")
	sk, err := f.store.FindSkill(context.Background(), "shop", "api")
	if err != nil {
		t.Fatal(err)
	}
	sk.Approvers = []string{"bob"}
	if err := f.store.PutSkill(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	mustIDs("bob, an approver of shop", f.approvalIDs(t, f.bob, ""), bobs.ID, shop.ID)

	var got mcpgate.Approval
	f.call(t, "POST", "/api/v1/approvals/"+shop.ID+"/reject", f.bob, `{"reason":"not today"}`).want(t, http.StatusOK).decode(t, &got)
	if got.State != mcpgate.ApprovalRejected || got.Reviewer != "bob" || got.Reason != "not today" {
		t.Fatalf("decided = %+v", got)
	}
	f.call(t, "POST", "/api/v1/approvals/"+shop.ID+"/approve", f.alice, "").wantError(t, http.StatusConflict, "conflict", "", "rejected already")
	f.call(t, "POST", "/api/v1/approvals/"+bobs.ID+"/approve", f.root, "").want(t, http.StatusOK)
}

// TestApprovalsAPIListsReviewersOwn: a reviewer's list holds its own
// approvals up to the limit however many newer ones of agents it may not
// review there are, and an approver of one skill sees that skill's only.
func TestApprovalsAPIListsReviewersOwn(t *testing.T) {
	f := mustAPIFixture(t)
	f.srv.opts.Approvals = storeDecider{f.store}
	bobs := f.mustApproval(t, "bobs")
	for range 3 {
		f.mustApproval(t, "shop")
	}
	if got := f.approvalIDs(t, f.bob, "?limit=1"); len(got) != 1 || got[0] != bobs.ID {
		t.Fatalf("bob, limit 1: %q, want %q", got, bobs.ID)
	}
	other := &mcpgate.Approval{AgentID: "shop", Skill: "other", Tool: "wipe", Arguments: []byte(`{}`), ArgsHash: "h",
		Identity: "user:x", RequestedAt: time.Now(), Deadline: time.Now().Add(time.Minute)}
	if err := f.store.CreateApproval(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	if got := f.approvalIDs(t, f.bob, "?agent=shop"); len(got) != 0 {
		t.Fatalf("bob sees shop's approvals before he is an approver: %q", got)
	}
	sk, err := f.store.FindSkill(context.Background(), "shop", "api")
	if err != nil {
		t.Fatal(err)
	}
	sk.Approvers = []string{"bob"}
	if err := f.store.PutSkill(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	if got := f.approvalIDs(t, f.bob, "?agent=shop"); len(got) != 3 || slices.Contains(got, other.ID) {
		t.Fatalf("bob, an approver of shop's skill api: %q, want its 3 approvals and not skill other's", got)
	}
	if got := f.approvalIDs(t, f.alice, "?agent=shop"); len(got) != 4 {
		t.Fatalf("alice, shop's owner: %q, want all 4", got)
	}
	f.call(t, "POST", "/api/v1/approvals/"+other.ID+"/approve", f.bob, "").wantError(t, http.StatusNotFound, "not_found", "", "")
}

// TestSkillApprovalMode: /api/v1 takes approval: caller on a skill whose
// calls need approval, returns it, and refuses it where nothing is gated.
func TestSkillApprovalMode(t *testing.T) {
	f := mustAPIFixture(t)
	gated := strings.Replace(skillJSON("confirm", "wipe"), `"kind":"rest"`, `"kind":"rest","auto_approve":false,"approval":"caller"`, 1)
	var sk mcpgate.Skill
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, gated).want(t, http.StatusCreated).decode(t, &sk)
	if sk.Approval != mcpgate.ApprovalCaller || sk.AutoApprove {
		t.Fatalf("created skill: approval %q, auto_approve %v", sk.Approval, sk.AutoApprove)
	}
	stored, err := f.store.FindSkill(context.Background(), "shop", "confirm")
	if err != nil || stored.Approval != mcpgate.ApprovalCaller {
		t.Fatalf("stored skill: %+v, %v", stored, err)
	}
	ungated := strings.Replace(skillJSON("loose", "wipe"), `"kind":"rest"`, `"kind":"rest","approval":"caller"`, 1)
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, ungated).wantError(t, http.StatusBadRequest, "invalid", "approval", "no tool of this skill needs one")
}
