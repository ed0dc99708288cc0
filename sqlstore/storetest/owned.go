package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// The listings of one owner's rows (calls, approvals, tasks) read them
// agent by agent and merge them: these tests list owners of several
// agents, of none, and of more than the store merges, whose listing
// selects their agents otherwise.

// manyAgents is more agents than the store lists branch by branch.
const manyAgents = 70

// mustOwnedAgents creates the agents of ids, owned by ownerID.
func mustOwnedAgents(t *testing.T, s mcpgate.Store, ownerID string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		mustAgent(t, s, id, ownerID)
	}
}

// agentIDs returns n agent IDs starting with prefix.
func agentIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return ids
}

// newestFirst returns the IDs of the rows newest first, ties by ID, as the
// listings order them.
func newestFirst[T any](rows []T, at func(T) (time.Time, string)) []string {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b T) int {
		ta, ia := at(a)
		tb, ib := at(b)
		if c := tb.Compare(ta); c != 0 {
			return c
		}
		return strings.Compare(ib, ia)
	})
	ids := make([]string, len(rows))
	for i, r := range rows {
		_, ids[i] = at(r)
	}
	return ids
}

// callAt returns a call's time and ID.
func callAt(c *mcpgate.CallRecord) (time.Time, string) { return c.Time, c.ID }

// allPages returns the IDs of the rows list returns over all its pages:
// list is called with the cursor "" first, then with each next one.
func allPages[T any](t *testing.T, list func(cursor string) ([]T, string, error), at func(T) (time.Time, string)) []string {
	t.Helper()
	ids := []string{}
	for cursor := ""; ; {
		page, next, err := list(cursor)
		must(t, err)
		for _, row := range page {
			_, id := at(row)
			ids = append(ids, id)
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
}

// listAllCalls returns the IDs of the calls f lists over all its pages.
func listAllCalls(t *testing.T, s mcpgate.Store, f mcpgate.CallFilter) []string {
	t.Helper()
	return allPages(t, func(cursor string) ([]*mcpgate.CallRecord, string, error) {
		f.Cursor = cursor
		return s.ListCalls(context.Background(), f)
	}, callAt)
}

// testCallListOwnerAgents pages through the calls of an owner's three
// agents, two of them calling at the same times, besides another owner's
// calls: each page newest first, ties by ID, every call of the owner once.
func testCallListOwnerAgents(t *testing.T, s mcpgate.Store) {
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustOwnedAgents(t, s, alice.ID, "a", "b", "c")
	mustOwnedAgents(t, s, bob.ID, "d")
	base := time.Now()
	var all, mine, failed []*mcpgate.CallRecord
	for i := range 30 {
		for _, agent := range []string{"a", "b", "c", "d"} {
			if agent == "c" && i%7 != 0 {
				continue
			}
			outcome := mcpgate.OutcomeOK
			if i%3 == 0 {
				outcome = "error"
			}
			all = append(all, mustCallRecord(agent, "x", outcome, base.Add(-time.Duration(i/2)*time.Second)))
		}
	}
	must(t, s.InsertCalls(context.Background(), all))
	for _, c := range all {
		if c.AgentID != "d" {
			mine = append(mine, c)
			if c.Outcome == "error" {
				failed = append(failed, c)
			}
		}
	}
	mustEqual(t, "alice's calls", listAllCalls(t, s, mcpgate.CallFilter{OwnerID: alice.ID, Limit: 7}), newestFirst(mine, callAt))
	mustEqual(t, "alice's failed calls", listAllCalls(t, s, mcpgate.CallFilter{OwnerID: alice.ID, Outcome: "error", Limit: 4}),
		newestFirst(failed, callAt))
	mustEqual(t, "alice's calls of b", len(listAllCalls(t, s, mcpgate.CallFilter{OwnerID: alice.ID, AgentID: "b"})), 30)
	mustEqual(t, "alice's calls of d", listAllCalls(t, s, mcpgate.CallFilter{OwnerID: alice.ID, AgentID: "d"}), []string{})
	carol := mustUser(t, s, "carol")
	mustEqual(t, "carol's calls", listAllCalls(t, s, mcpgate.CallFilter{OwnerID: carol.ID}), []string{})
}

// testCallListManyAgents lists the calls of an owner of more agents than
// the store merges.
func testCallListManyAgents(t *testing.T, s mcpgate.Store) {
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	agents := agentIDs("a", manyAgents)
	mustOwnedAgents(t, s, alice.ID, agents...)
	mustOwnedAgents(t, s, bob.ID, "b")
	var mine []*mcpgate.CallRecord
	for i, agent := range append(agents, "b") {
		c := mustCallRecord(agent, "x", mcpgate.OutcomeOK, time.Now().Add(-time.Duration(i)*time.Millisecond))
		must(t, s.InsertCalls(context.Background(), []*mcpgate.CallRecord{c}))
		if agent != "b" {
			mine = append(mine, c)
		}
	}
	mustEqual(t, "alice's calls", listAllCalls(t, s, mcpgate.CallFilter{OwnerID: alice.ID, Limit: 30}), newestFirst(mine, callAt))
}

// taskAt returns a task's time and ID.
func taskAt(k *mcpgate.Task) (time.Time, string) { return k.CreatedAt, k.ID }

// listAllTasks returns the IDs of the tasks f lists over all its pages.
func listAllTasks(t *testing.T, s mcpgate.Store, f mcpgate.TaskFilter) []string {
	t.Helper()
	return allPages(t, func(cursor string) ([]*mcpgate.Task, string, error) {
		f.Cursor = cursor
		return s.ListTasks(context.Background(), f)
	}, taskAt)
}

// testTaskListOwnerAgents pages through the tasks of the agents of an
// owner of two, then of one of many, then of one of none.
func testTaskListOwnerAgents(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob, carol := mustUser(t, s, "alice"), mustUser(t, s, "bob"), mustUser(t, s, "carol")
	mustOwnedAgents(t, s, alice.ID, "a", "b")
	mustOwnedAgents(t, s, bob.ID, agentIDs("m", manyAgents)...)
	base := time.Now().Add(-time.Hour)
	var alices, working, bobs []*mcpgate.Task
	for i := range 12 {
		for j, agent := range []string{"a", "b", "m07", "m42", "other"} {
			k := newTask(agent, "user:u1", "r1", base.Add(time.Duration(i/2)*time.Second+time.Duration(j)*time.Millisecond))
			must(t, s.CreateTask(ctx, k))
			switch {
			case agent == "a" || agent == "b":
				alices = append(alices, k)
			case strings.HasPrefix(agent, "m"):
				bobs = append(bobs, k)
			}
		}
	}
	for i, k := range alices {
		if i%4 == 0 {
			_, err := s.FinishTask(ctx, k.ID, mcpgate.TaskEnd{Status: mcpgate.TaskCompleted})
			must(t, err)
			continue
		}
		working = append(working, k)
	}
	mustEqual(t, "alice's tasks", listAllTasks(t, s, mcpgate.TaskFilter{OwnerID: alice.ID, Limit: 5}), newestFirst(alices, taskAt))
	mustEqual(t, "alice's working tasks", listAllTasks(t, s, mcpgate.TaskFilter{OwnerID: alice.ID, Status: mcpgate.TaskWorking, Limit: 3}),
		newestFirst(working, taskAt))
	mustEqual(t, "bob's tasks", listAllTasks(t, s, mcpgate.TaskFilter{OwnerID: bob.ID, Limit: 5}), newestFirst(bobs, taskAt))
	mustEqual(t, "carol's tasks", listAllTasks(t, s, mcpgate.TaskFilter{OwnerID: carol.ID}), []string{})
}

// approvalAt returns an approval's time and ID.
func approvalAt(a *mcpgate.Approval) (time.Time, string) { return a.RequestedAt, a.ID }

// testApprovalListOwnerAgents lists the approvals of the agents of an
// owner of two, in full and the newest few, then of one of many, then of
// one of none.
func testApprovalListOwnerAgents(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob, carol := mustUser(t, s, "alice"), mustUser(t, s, "bob"), mustUser(t, s, "carol")
	mustOwnedAgents(t, s, alice.ID, "a", "b")
	mustOwnedAgents(t, s, bob.ID, agentIDs("m", manyAgents)...)
	base := time.Now()
	var alices, bobs []*mcpgate.Approval
	for i := range 8 {
		for _, agent := range []string{"a", "b", "m03", "m66", "other"} {
			a := newApproval(agent, "", base.Add(time.Duration(i/2)*time.Second))
			must(t, s.CreateApproval(ctx, a))
			switch {
			case agent == "a" || agent == "b":
				alices = append(alices, a)
			case strings.HasPrefix(agent, "m"):
				bobs = append(bobs, a)
			}
		}
	}
	ids := func(f mcpgate.ApprovalFilter) []string {
		t.Helper()
		list, err := s.ListApprovals(ctx, f)
		must(t, err)
		out := []string{}
		for _, a := range list {
			out = append(out, a.ID)
		}
		return out
	}
	mustEqual(t, "alice's approvals", ids(mcpgate.ApprovalFilter{OwnerID: alice.ID}), newestFirst(alices, approvalAt))
	mustEqual(t, "alice's newest approvals", ids(mcpgate.ApprovalFilter{OwnerID: alice.ID, Limit: 3}), newestFirst(alices, approvalAt)[:3])
	mustEqual(t, "bob's approvals", ids(mcpgate.ApprovalFilter{OwnerID: bob.ID}), newestFirst(bobs, approvalAt))
	mustEqual(t, "carol's approvals", ids(mcpgate.ApprovalFilter{OwnerID: carol.ID}), []string{})
}
