package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// The store's statements on the tables that grow with use (the audit log,
// stream events, approvals, tasks, idempotency keys, files, webhook
// deliveries, sessions, peer messages) reach their rows through an index
// that leads to them, even under a generic plan made while the tables
// were empty, which is what pgx's cached statements get on a new
// database: no statement reads a whole table, and none finds a row by
// its key through another index. Before, a decision on an approval read
// every pending approval (approvals_state_deadline, the id a filter),
// and the lookups of an idempotency key read every approval of the agent
// (approvals_agent_requested) or every task of the caller
// (tasks_identity_created); a runner's heartbeat read every task (no index
// on runner; now tasks_runner_unfinished), and the listings of a user's
// agents' calls, approvals and tasks read the whole table (agent_id IN the
// owner's agents; now one branch per agent, through its index). The scans
// allowed below say why each is kept.
func TestStorePlansReadNoRange(t *testing.T) {
	dsn := pgtest.Database(t, pgtest.Admin(t))
	s, log := openTraced(t, dsn, onGrownTable)
	storeOps(t, s, log.during)
	traced := log.statements()
	if len(traced) < 60 {
		t.Fatalf("%d statements on grown tables traced, want 60 or more", len(traced))
	}
	used := map[int]bool{}
	for q, tr := range traced {
		plan := genericPlan(t, dsn, q, tr.args)
		for _, line := range wideReads(plan) {
			if i := allowance(q, line); i >= 0 {
				used[i] = true
				continue
			}
			t.Errorf("%s: the generic plan of\n%s\nreads more than the rows it needs at\n%s\n%s", tr.op, q, line, plan)
		}
	}
	for i, a := range allowedReads {
		if !used[i] {
			t.Errorf("allowed read %q of %q (%s) no longer happens: remove it", a.scan, a.statement, a.reason)
		}
	}
}

// grownTables are the tables that grow with use.
var grownTables = []string{"calls", "stream_events", "approvals", "tasks", "idempotency", "files",
	"webhook_events", "webhook_deliveries", "webhook_attempts", "sessions", "peer_messages"}

// onGrownTable reports whether q, a statement the store sent, reads or
// writes a table of grownTables.
func onGrownTable(q string) bool {
	verb, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	switch strings.ToUpper(verb) {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "WITH":
	default:
		return false
	}
	for _, table := range grownTables {
		for _, before := range []string{"FROM ", "INTO ", "UPDATE ", "JOIN "} {
			if strings.Contains(q, before+table+" ") || strings.Contains(q, before+table+"\n") || strings.HasSuffix(q, before+table) {
				return true
			}
		}
	}
	return false
}

// wideReads returns the lines of plan that read more rows than a
// statement needs: a sequential scan of a grown table, and a key (an id,
// an idempotency key) checked by a filter over another index's range
// instead of looked up.
func wideReads(plan string) []string {
	var lines []string
	for line := range strings.SplitSeq(plan, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.Contains(l, "Seq Scan on "):
			_, rest, _ := strings.Cut(l, "Seq Scan on ")
			table, _, _ := strings.Cut(rest, " ")
			for _, g := range grownTables {
				if table == g {
					lines = append(lines, l)
				}
			}
		case strings.HasPrefix(l, "Filter:") && (strings.Contains(l, "(id = $") || strings.Contains(l, "(idempotency_key = $")):
			lines = append(lines, l)
		}
	}
	return lines
}

// allowedRead is a wide read kept on purpose: the statement that
// contains statement may read scan, a line of its plan, for reason.
type allowedRead struct {
	statement, scan, reason string
}

// allowedReads are the wide reads kept, each with its reason.
var allowedReads = []allowedRead{
	{"DELETE FROM calls WHERE id IN", "Seq Scan on calls", "the retention sweep, hourly: the first analyze replans it"},
	{"DELETE FROM tasks WHERE id IN", "Seq Scan on tasks", "the sweep of expired tasks, periodic: the first analyze replans it"},
	{"DELETE FROM idempotency WHERE", "Seq Scan on idempotency", "the sweep of expired keys, once a minute: the first analyze replans it"},
	{"DELETE FROM files WHERE id IN", "Seq Scan on files", "the sweep of due files, periodic: the first analyze replans it (TestSweepPlansAnalyzed)"},
	{"DELETE FROM stream_events WHERE created_at", "Seq Scan on stream_events", "the sweep of old events, periodic: the first analyze replans it"},
	{"DELETE FROM sessions WHERE last_seen_at", "Seq Scan on sessions", "the sweep of idle sessions, periodic: the first analyze replans it"},
	{"DELETE FROM peer_messages WHERE created_at", "Seq Scan on peer_messages", "the sweep of old peer messages, periodic: the first analyze replans it"},
	{"DELETE FROM webhook_events WHERE created_at", "Seq Scan on webhook_events", "the webhook retention sweep's old events, periodic: the first analyze replans it (TestSweepPlansAnalyzed)"},
	{"DELETE FROM webhook_events WHERE created_at", "Seq Scan on webhook_deliveries", "the same: the first analyze replans it"},
	{"DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT", "Seq Scan on webhook_attempts", "deleting a webhook, a rare act of its user"},
}

// allowance returns the index in allowedReads of the read that allows
// line of q's plan, or -1.
func allowance(q, line string) int {
	for i, a := range allowedReads {
		if strings.Contains(q, a.statement) && strings.Contains(line, a.scan) {
			return i
		}
	}
	return -1
}

// storeOps runs on s the store's operations on grown tables, calling op
// with the name of each group of them before it runs, and with "" after
// the last.
func storeOps(t *testing.T, s *sqlstore.Store, op func(string)) {
	ctx := context.Background()
	u := &mcpgate.User{Name: "alice", PasswordHash: "x", Source: mcpgate.SourceCLI}
	mustDo(t, s.CreateUser(ctx, u))
	mustDo(t, s.CreateAgent(ctx, &mcpgate.Agent{ID: "weather", Name: "Weather", OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	// A second agent: a listing of the owner's rows merges two branches.
	mustDo(t, s.CreateAgent(ctx, &mcpgate.Agent{ID: "news", Name: "News", OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	now := time.Now().Truncate(time.Microsecond)
	for _, g := range []struct {
		name string
		run  func(*testing.T, *sqlstore.Store, *mcpgate.User, time.Time)
	}{
		{"calls", callOps},
		{"stream events", streamEventOps},
		{"approvals", approvalOps},
		{"tasks", taskOps},
		{"idempotency", idempotencyOps},
		{"files", fileOps},
		{"webhooks", webhookOps},
		{"sessions", sessionOps},
		{"peer messages", peerMessageOps},
	} {
		op(g.name)
		g.run(t, s, u, now)
	}
	op("")
}

// callOps runs the operations on the audit log: insert, the listings and
// count the API and the CLI run, a lookup, the retention sweep.
func callOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	calls := []*mcpgate.CallRecord{
		{AgentID: "weather", Tool: "forecast", UserID: u.ID, Outcome: "ok", ArgsHash: "h"},
		{AgentID: "weather", Tool: "forecast", UserID: u.ID, Outcome: "error", ArgsHash: "h"},
		{AgentID: "weather", Tool: "alerts", UserID: u.ID, Outcome: "ok", ArgsHash: "h"},
	}
	mustDo(t, s.InsertCalls(ctx, calls))
	_, next, err := s.ListCalls(ctx, mcpgate.CallFilter{Limit: 1})
	mustDo(t, err)
	_, _, err = s.ListCalls(ctx, mcpgate.CallFilter{Limit: 1, Cursor: next})
	mustDo(t, err)
	_, _, err = s.ListCalls(ctx, mcpgate.CallFilter{AgentID: "weather", Limit: 1, Cursor: next})
	mustDo(t, err)
	_, _, err = s.ListCalls(ctx, mcpgate.CallFilter{OwnerID: u.ID})
	mustDo(t, err)
	_, _, err = s.ListCalls(ctx, mcpgate.CallFilter{AgentID: "weather", Tool: "forecast", UserID: u.ID, Outcome: "ok", Since: now.Add(-time.Hour), Until: now.Add(time.Hour)})
	mustDo(t, err)
	_, err = s.CountCalls(ctx, mcpgate.CallFilter{AgentID: "weather"})
	mustDo(t, err)
	_, err = s.FindCall(ctx, calls[0].ID)
	mustDo(t, err)
	_, err = s.DeleteCallsBefore(ctx, now.Add(-time.Hour), 100)
	mustDo(t, err)
}

// streamEventOps runs the operations on the MCP sessions' replay log: a
// batch with a floor, a replay, the sweep.
func streamEventOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	var err error
	evs := []*mcpgate.StreamEvent{
		{Session: "s1", Replica: "r1", Pos: 1, Stream: "st", Seq: 1, Wire: []byte("x")},
		{Session: "s1", Replica: "r1", Pos: 2, Stream: "st", Seq: 2, Wire: []byte("y")},
	}
	mustDo(t, s.PutStreamEvents(ctx, evs, []mcpgate.StreamFloor{{Replica: "r1", Session: "s1", Pos: 1}}))
	_, err = s.StreamEvents(ctx, "s1", "st", 1)
	mustDo(t, err)
	_, err = s.DeleteStreamEvents(ctx, now.Add(-time.Hour))
	mustDo(t, err)
}

// approvalOps runs the operations on approvals: create, look up by id and
// by idempotency key, list, decide twice, expire.
func approvalOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	var err error
	a := &mcpgate.Approval{AgentID: "weather", Skill: "s", Tool: "t", Arguments: []byte("{}"), Identity: "user:" + u.ID, IdempotencyKey: "k", Deadline: now.Add(time.Hour)}
	mustDo(t, s.CreateApproval(ctx, a))
	b := &mcpgate.Approval{AgentID: "weather", Skill: "s", Tool: "t", Arguments: []byte("{}"), Identity: "user:" + u.ID, Deadline: now.Add(-time.Hour)}
	mustDo(t, s.CreateApproval(ctx, b))
	_, err = s.FindApproval(ctx, a.ID)
	mustDo(t, err)
	_, err = s.FindApprovalByKey(ctx, a.Identity, "weather", "k")
	mustDo(t, err)
	_, err = s.ListApprovals(ctx, mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending, AgentID: "weather"})
	mustDo(t, err)
	_, err = s.ListApprovals(ctx, mcpgate.ApprovalFilter{OwnerID: u.ID})
	mustDo(t, err)
	_, err = s.ListReviewableApprovals(ctx, u.ID, mcpgate.ApprovalFilter{State: mcpgate.ApprovalPending})
	mustDo(t, err)
	_, err = s.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalApproved, Reviewer: "alice"})
	mustDo(t, err)
	_, err = s.DecideApproval(ctx, a.ID, mcpgate.Decision{State: mcpgate.ApprovalRejected, Reviewer: "alice"})
	if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		t.Fatalf("second decision: %v", err)
	}
	_, err = s.ExpireApprovals(ctx, now, 10)
	mustDo(t, err)
}

// taskOps runs the operations on tasks: create, look up by id and by
// idempotency key, list, update, heartbeat, fail stale ones, sweep.
func taskOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	var err error
	tk := &mcpgate.Task{AgentID: "weather", Tool: "t", Identity: "user:" + u.ID, IdempotencyKey: "k", TTL: time.Hour, Runner: "r1"}
	mustDo(t, s.CreateTask(ctx, tk))
	tk2 := &mcpgate.Task{AgentID: "weather", Tool: "t", Identity: "user:" + u.ID, TTL: time.Hour, Runner: "r2"}
	mustDo(t, s.CreateTask(ctx, tk2))
	_, err = s.FindTask(ctx, tk.ID)
	mustDo(t, err)
	_, err = s.FindTaskByKey(ctx, tk.Identity, "weather", "k", now)
	mustDo(t, err)
	_, next, err := s.ListTasks(ctx, mcpgate.TaskFilter{AgentID: "weather", Limit: 1})
	mustDo(t, err)
	_, _, err = s.ListTasks(ctx, mcpgate.TaskFilter{OwnerID: u.ID, Identity: tk.Identity, Limit: 1, Cursor: next})
	mustDo(t, err)
	_, _, err = s.ListTasks(ctx, mcpgate.TaskFilter{Identity: tk.Identity, Status: mcpgate.TaskWorking})
	mustDo(t, err)
	_, _, err = s.ListTasks(ctx, mcpgate.TaskFilter{OwnerID: u.ID})
	mustDo(t, err)
	mustDo(t, s.SetTaskMessage(ctx, tk.ID, "half way", now))
	mustDo(t, s.HeartbeatTasks(ctx, "r1", now))
	_, err = s.FinishTask(ctx, tk.ID, mcpgate.TaskEnd{Status: mcpgate.TaskCompleted, Result: []byte("{}")})
	mustDo(t, err)
	_, err = s.FailStaleTasks(ctx, now.Add(time.Hour), "r1", "gone", now)
	mustDo(t, err)
	_, err = s.DeleteExpiredTasks(ctx, now, 10)
	mustDo(t, err)
}

// idempotencyOps runs the operations on idempotency keys: claim, claim
// again (held), complete, release, sweep.
func idempotencyOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	c := &mcpgate.IdempotencyClaim{Identity: "user:" + u.ID, AgentID: "weather", Key: "k", Hash: "h", ClaimedAt: now, StaleAt: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)}
	held, err := s.ClaimIdempotency(ctx, c, now)
	mustDo(t, err)
	if held != nil {
		t.Fatal("claimed key held")
	}
	c2 := *c
	c2.Token = ""
	held, err = s.ClaimIdempotency(ctx, &c2, now)
	mustDo(t, err)
	if held == nil {
		t.Fatal("second claim won")
	}
	mustDo(t, s.CompleteIdempotency(ctx, c, []byte("{}")))
	mustDo(t, s.ReleaseIdempotency(ctx, c))
	_, err = s.DeleteExpiredIdempotency(ctx, now, 10)
	mustDo(t, err)
}

// fileOps runs the operations on files: create, look up, move, check a
// blob, sweep.
func fileOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	var err error
	f := &mcpgate.File{ID: "file_1", UserID: u.ID, Filename: "a.txt", ContentType: "text/plain", Status: mcpgate.FilePending, ExpiresAt: now.Add(time.Hour)}
	mustDo(t, s.CreateFile(ctx, f))
	_, err = s.FindFile(ctx, f.ID)
	mustDo(t, err)
	mustDo(t, s.MoveFile(ctx, f.ID, mcpgate.FilePending, mcpgate.FileReady, "abc"))
	_, err = s.FileBlobInUse(ctx, "abc")
	mustDo(t, err)
	_, err = s.SweepFiles(ctx, now, now.Add(-time.Hour), 10)
	mustDo(t, err)
}

// webhookOps runs the operations on a webhook's outbox: enqueue, claim,
// finish an attempt, list, redeliver, sweep, delete the webhook.
func webhookOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	w := &mcpgate.Webhook{UserID: u.ID, URL: "https://example.com/hook", Events: []string{"call.finished"}}
	mustDo(t, s.CreateWebhook(ctx, w))
	n, err := s.EnqueueEvent(ctx, &mcpgate.Event{ID: "evt_1", Type: "call.finished", UserID: u.ID, AgentID: "weather", CreatedAt: now}, []byte("{}"), now.Add(time.Hour))
	mustDo(t, err)
	if n != 1 {
		t.Fatalf("enqueued %d deliveries", n)
	}
	due, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10)
	mustDo(t, err)
	if len(due) != 1 {
		t.Fatalf("claimed %d deliveries", len(due))
	}
	mustDo(t, s.FinishAttempt(ctx, &mcpgate.WebhookAttempt{DeliveryID: due[0].ID, Attempt: 1, Time: now, Status: 200}, mcpgate.DeliveryOutcome{State: mcpgate.DeliverySucceeded}))
	_, err = s.ListDeliveries(ctx, w.ID, 10)
	mustDo(t, err)
	_, err = s.Redeliver(ctx, w.ID, due[0].ID, now, now.Add(time.Hour))
	mustDo(t, err)
	_, err = s.DeleteDeliveriesBefore(ctx, time.Now().Add(time.Hour), 10)
	mustDo(t, err)
	mustDo(t, s.DeleteWebhook(ctx, w.ID))
}

// sessionOps runs the operations on MCP sessions: create, look up, update,
// end, sweep.
func sessionOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	var err error
	ss := &mcpgate.Session{ID: "sess-1", AgentID: "weather", Identity: "user:" + u.ID, ProtocolVersion: "2025-06-18"}
	mustDo(t, s.CreateSession(ctx, ss))
	_, err = s.FindSession(ctx, ss.ID)
	mustDo(t, err)
	mustDo(t, s.SetSessionLogLevel(ctx, ss.ID, "info"))
	mustDo(t, s.TouchSession(ctx, ss.ID, now))
	mustDo(t, s.EndSession(ctx, ss.ID, now))
	_, err = s.DeleteSessions(ctx, now.Add(-time.Hour))
	mustDo(t, err)
}

// peerMessageOps runs the operations on messages between replicas: put,
// read, sweep.
func peerMessageOps(t *testing.T, s *sqlstore.Store, u *mcpgate.User, now time.Time) {
	ctx := context.Background()
	var err error
	mustDo(t, s.PutPeerMessage(ctx, &mcpgate.PeerMessage{From: "r1", To: "r2", Body: []byte("{}")}))
	_, err = s.PeerMessages(ctx, "r2", now.Add(-time.Minute))
	mustDo(t, err)
	_, err = s.DeletePeerMessages(ctx, now.Add(-time.Hour))
	mustDo(t, err)
}
