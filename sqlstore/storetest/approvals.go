package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func approvalTests() []test {
	return []test{
		{"CreateFind", testApprovalCreateFind},
		{"DecideOnce", testApprovalDecideOnce},
		{"ConcurrentDecisions", testApprovalConcurrent},
		{"List", testApprovalList},
		{"ListOwnerAgents", testApprovalListOwnerAgents},
		{"Reviewable", testApprovalReviewable},
		{"ByKey", testApprovalByKey},
		{"Expire", testApprovalExpire},
	}
}

// newApproval returns a pending approval of agent's tool asked at t with a
// deadline five minutes later.
func newApproval(agent, key string, t time.Time) *mcpgate.Approval {
	return &mcpgate.Approval{AgentID: agent, Skill: "files", Tool: "delete", Arguments: []byte(`{"path":"/tmp/a"}`),
		ArgsHash: "h1", Identity: "user:u1", UserID: "u1", CredentialKind: mcpgate.CredentialUserKey,
		CredentialID: "key_1", SessionID: "ses_1", IdempotencyKey: key, RequestedAt: t, Deadline: t.Add(5 * time.Minute)}
}

func testApprovalCreateFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	a := newApproval("weather", "", time.Now())
	must(t, s.CreateApproval(ctx, a))
	if a.ID == "" || a.State != mcpgate.ApprovalPending {
		t.Fatalf("created = %+v; want an ID, pending", a)
	}
	got, err := s.FindApproval(ctx, a.ID)
	must(t, err)
	mustEqual(t, "approval", got, a)
	mustStoredPrecision(t, "RequestedAt", got.RequestedAt)
	_, err = s.FindApproval(ctx, "apr_missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testApprovalDecideOnce(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	a := newApproval("weather", "", time.Now())
	must(t, s.CreateApproval(ctx, a))
	at := time.Now().UTC().Truncate(time.Microsecond)
	got, err := s.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalRejected, Reviewer: "usr_alice", Reason: "no", At: at})
	must(t, err)
	if got.State != mcpgate.ApprovalRejected || got.Reviewer != "usr_alice" || got.Reason != "no" || !got.DecidedAt.Equal(at) {
		t.Fatalf("decided = %+v", got)
	}
	late, err := s.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalApproved, Reviewer: "usr_bob"})
	mustCode(t, err, mcpgate.ECONFLICT)
	if late == nil || late.State != mcpgate.ApprovalRejected || late.Reviewer != "usr_alice" {
		t.Fatalf("late decision: row = %+v; want the first decision", late)
	}
	_, err = s.DecideApproval(ctx, "apr_missing", mcpgate.Decision{State: mcpgate.ApprovalApproved})
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalPending})
	mustCode(t, err, mcpgate.EINVALID)
}

// testApprovalConcurrent decides one approval from many goroutines at once:
// exactly one wins.
func testApprovalConcurrent(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	a := newApproval("weather", "", time.Now())
	must(t, s.CreateApproval(ctx, a))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := range 8 {
		wg.Go(func() {
			state := mcpgate.ApprovalApproved
			if i%2 == 1 {
				state = mcpgate.ApprovalRejected
			}
			_, err := s.DecideApproval(ctx, a.ID, mcpgate.Decision{State: state, Reviewer: "usr_r"})
			mu.Lock()
			defer mu.Unlock()
			switch mcpgate.ErrorCode(err) {
			case "":
				wins++
			case mcpgate.ECONFLICT:
				conflicts++
			default:
				t.Errorf("decide: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Fatalf("wins = %d, conflicts = %d; want 1 and 7", wins, conflicts)
	}
}

func testApprovalList(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	t0 := time.Now()
	a1, a2, a3 := newApproval("weather", "", t0), newApproval("weather", "", t0.Add(time.Second)), newApproval("other", "", t0.Add(2*time.Second))
	for _, a := range []*mcpgate.Approval{a1, a2, a3} {
		must(t, s.CreateApproval(ctx, a))
	}
	_, err := s.DecideApproval(ctx, a1.ID, mcpgate.Decision{State: mcpgate.ApprovalApproved, Reviewer: "usr_r"})
	must(t, err)
	ids := func(f mcpgate.ApprovalFilter) []string {
		list, err := s.ListApprovals(ctx, f)
		must(t, err)
		var out []string
		for _, a := range list {
			out = append(out, a.ID)
		}
		return out
	}
	mustEqual(t, "all", ids(mcpgate.ApprovalFilter{}), []string{a3.ID, a2.ID, a1.ID})
	mustEqual(t, "pending", ids(mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending}), []string{a3.ID, a2.ID})
	mustEqual(t, "agent", ids(mcpgate.ApprovalFilter{AgentID: "weather"}), []string{a2.ID, a1.ID})
	mustEqual(t, "owner", ids(mcpgate.ApprovalFilter{OwnerID: u.ID, State: mcpgate.ApprovalApproved}), []string{a1.ID})
	mustEqual(t, "limit", ids(mcpgate.ApprovalFilter{Limit: 1}), []string{a3.ID})
}

// testApprovalReviewable lists for each user the approvals it may decide:
// of the agents it owns, and of the skills naming it among their approvers
// (a name that only contains it, or another skill's, does not count).
func testApprovalReviewable(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob, carol := mustUser(t, s, "alice"), mustUser(t, s, "bob"), mustUser(t, s, "carol")
	mustUser(t, s, "bobby")
	mustAgent(t, s, "shop", alice.ID)
	mustAgent(t, s, "lab", carol.ID)
	for _, sk := range []*mcpgate.Skill{
		{AgentID: "shop", Name: "files", Kind: mcpgate.SkillMCP, Approvers: []string{"bob", "dave"}},
		{AgentID: "shop", Name: "mail", Kind: mcpgate.SkillMCP, Approvers: []string{"bobby"}},
		{AgentID: "lab", Name: "files", Kind: mcpgate.SkillMCP},
	} {
		must(t, s.PutSkill(ctx, sk))
	}
	t0 := time.Now()
	files, mail, lab := newApproval("shop", "", t0), newApproval("shop", "", t0.Add(time.Second)), newApproval("lab", "", t0.Add(2*time.Second))
	mail.Skill = "mail"
	for _, a := range []*mcpgate.Approval{files, mail, lab} {
		must(t, s.CreateApproval(ctx, a))
	}
	_, err := s.DecideApproval(ctx, files.ID, mcpgate.Decision{State: mcpgate.ApprovalApproved, Reviewer: "alice"})
	must(t, err)
	ids := func(userID string, f mcpgate.ApprovalFilter) []string {
		t.Helper()
		list, err := s.ListReviewableApprovals(ctx, userID, f)
		must(t, err)
		var out []string
		for _, a := range list {
			out = append(out, a.ID)
		}
		return out
	}
	mustEqual(t, "alice's (owner)", ids(alice.ID, mcpgate.ApprovalFilter{}), []string{mail.ID, files.ID})
	mustEqual(t, "bob's (approver)", ids(bob.ID, mcpgate.ApprovalFilter{}), []string{files.ID})
	mustEqual(t, "bob's pending", ids(bob.ID, mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending}), []string{})
	mustEqual(t, "carol's", ids(carol.ID, mcpgate.ApprovalFilter{}), []string{lab.ID})
	mustEqual(t, "alice's pending", ids(alice.ID, mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending, Limit: 1}), []string{mail.ID})
	mustEqual(t, "an unknown user's", ids("usr_nobody", mcpgate.ApprovalFilter{}), []string{})
}

func testApprovalByKey(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	old, last := newApproval("weather", "k1", t0), newApproval("weather", "k1", t0.Add(time.Second))
	must(t, s.CreateApproval(ctx, old))
	must(t, s.CreateApproval(ctx, last))
	must(t, s.CreateApproval(ctx, newApproval("weather", "", t0.Add(2*time.Second))))
	got, err := s.FindApprovalByKey(ctx, "user:u1", "weather", "k1")
	must(t, err)
	mustEqual(t, "newest with the key", got.ID, last.ID)
	_, err = s.FindApprovalByKey(ctx, "user:u2", "weather", "k1")
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindApprovalByKey(ctx, "user:u1", "weather", "")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testApprovalExpire(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	t0 := time.Now()
	due, later, decided := newApproval("weather", "", t0), newApproval("weather", "", t0.Add(time.Hour)), newApproval("weather", "", t0)
	for _, a := range []*mcpgate.Approval{due, later, decided} {
		must(t, s.CreateApproval(ctx, a))
	}
	_, err := s.DecideApproval(ctx, decided.ID, mcpgate.Decision{State: mcpgate.ApprovalApproved, Reviewer: "usr_r"})
	must(t, err)
	expired, err := s.ExpireApprovals(ctx, t0.Add(10*time.Minute), 10)
	must(t, err)
	if len(expired) != 1 || expired[0].ID != due.ID || expired[0].State != mcpgate.ApprovalExpired {
		t.Fatalf("expired = %+v; want only the due one", expired)
	}
	again, err := s.ExpireApprovals(ctx, t0.Add(10*time.Minute), 10)
	must(t, err)
	mustEqual(t, "second sweep", len(again), 0)
}
