package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func callTests() []test {
	return []test{
		{"InsertFind", testCallInsertFind},
		{"ListFilters", testCallListFilters},
		{"ListPages", testCallListPages},
		{"ListOwner", testCallListOwner},
		{"ListOwnerAgents", testCallListOwnerAgents},
		{"ListManyAgents", testCallListManyAgents},
		{"Count", testCallCount},
		{"BadCursor", testCallBadCursor},
		{"DeleteBefore", testCallDeleteBefore},
	}
}

// mustCallRecord returns a call record of agent and tool at t.
func mustCallRecord(agent, tool, outcome string, t time.Time) *mcpgate.CallRecord {
	return &mcpgate.CallRecord{
		Time: t, CredentialKind: mcpgate.CredentialUserKey, CredentialID: "key_1", UserID: "user_1",
		AgentID: agent, Skill: "s", Tool: tool, ArgsHash: "h", Arguments: json.RawMessage(`{"a":1}`),
		Outcome: outcome, Duration: 1500 * time.Microsecond, ResultBytes: 42, SessionID: "sess",
		IdempotencyKey: "k", Error: "",
	}
}

func testCallInsertFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	c := mustCallRecord("weather", "today", mcpgate.OutcomeOK, time.Now())
	must(t, s.InsertCalls(ctx, []*mcpgate.CallRecord{c}))
	if c.ID == "" {
		t.Fatal("InsertCalls set no ID")
	}
	mustStoredTime(t, "Time", c.Time)
	got, err := s.FindCall(ctx, c.ID)
	must(t, err)
	mustEqual(t, "call", got, c)
	_, err = s.FindCall(ctx, "call_nope")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

// mustCalls inserts n calls of each (agent, tool, outcome), a second apart
// before base, in one batch larger than one statement's.
func mustCalls(t *testing.T, s mcpgate.Store, base time.Time, n int, kinds ...[3]string) []*mcpgate.CallRecord {
	t.Helper()
	var all []*mcpgate.CallRecord
	for range n {
		for _, k := range kinds {
			all = append(all, mustCallRecord(k[0], k[1], k[2], base.Add(-time.Duration(len(all))*time.Second)))
		}
	}
	must(t, s.InsertCalls(context.Background(), all))
	return all
}

func testCallListFilters(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	base := time.Now()
	all := mustCalls(t, s, base, 60, [3]string{"a", "x", "ok"}, [3]string{"b", "y", "timeout"})
	count := func(f mcpgate.CallFilter) int {
		t.Helper()
		f.Limit = 1000
		got, next, err := s.ListCalls(ctx, f)
		must(t, err)
		mustEqual(t, "next", next, "")
		return len(got)
	}
	mustEqual(t, "all", count(mcpgate.CallFilter{}), 120)
	mustEqual(t, "agent a", count(mcpgate.CallFilter{AgentID: "a"}), 60)
	mustEqual(t, "tool y", count(mcpgate.CallFilter{Tool: "y"}), 60)
	mustEqual(t, "outcome timeout", count(mcpgate.CallFilter{Outcome: "timeout"}), 60)
	mustEqual(t, "user", count(mcpgate.CallFilter{UserID: "user_2"}), 0)
	// Calls are a second apart: all[10] is the 11th newest.
	mustEqual(t, "since", count(mcpgate.CallFilter{Since: all[9].Time}), 10)
	mustEqual(t, "until", count(mcpgate.CallFilter{Until: all[9].Time}), 110)
}

func testCallListPages(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	base := time.Now()
	// Two calls share each time, so pages must break ties by ID.
	all := mustCalls(t, s, base, 25, [3]string{"a", "x", "ok"})
	dup := mustCalls(t, s, base, 25, [3]string{"a", "x", "ok"})
	seen := map[string]bool{}
	f := mcpgate.CallFilter{Limit: 7}
	var prev *mcpgate.CallRecord
	for pages := 0; ; pages++ {
		got, next, err := s.ListCalls(ctx, f)
		must(t, err)
		for _, c := range got {
			if seen[c.ID] {
				t.Fatalf("call %s listed twice", c.ID)
			}
			seen[c.ID] = true
			if prev != nil && c.Time.After(prev.Time) {
				t.Fatalf("call at %v listed after one at %v", c.Time, prev.Time)
			}
			prev = c
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	mustEqual(t, "calls listed", len(seen), len(all)+len(dup))
}

func testCallListOwner(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustAgent(t, s, "a", alice.ID)
	mustAgent(t, s, "b", bob.ID)
	mustCalls(t, s, time.Now(), 3, [3]string{"a", "x", "ok"}, [3]string{"b", "x", "ok"}, [3]string{"gone", "x", "ok"})
	got, _, err := s.ListCalls(ctx, mcpgate.CallFilter{OwnerID: alice.ID})
	must(t, err)
	mustEqual(t, "alice's calls", len(got), 3)
	for _, c := range got {
		mustEqual(t, "agent", c.AgentID, "a")
	}
}

func testCallBadCursor(t *testing.T, s mcpgate.Store) {
	for _, cur := range []string{"!!", "bm9jb2xvbg", "eDpjYWxs"} {
		_, _, err := s.ListCalls(context.Background(), mcpgate.CallFilter{Cursor: cur})
		mustCode(t, err, mcpgate.EINVALID)
	}
}

func testCallDeleteBefore(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	base := time.Now()
	all := mustCalls(t, s, base, 30, [3]string{"a", "x", "ok"})
	cut := all[9].Time // 20 calls are older
	var total int64
	for {
		n, err := s.DeleteCallsBefore(ctx, cut, 7)
		must(t, err)
		if n > 7 {
			t.Fatalf("deleted %d calls, want at most 7", n)
		}
		if n == 0 {
			break
		}
		total += n
	}
	mustEqual(t, "deleted", total, int64(20))
	got, _, err := s.ListCalls(ctx, mcpgate.CallFilter{})
	must(t, err)
	mustEqual(t, "left", len(got), 10)
	_, err = s.FindCall(ctx, all[9].ID)
	must(t, err)
	_, err = s.FindCall(ctx, all[10].ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
}

// testCallCount counts what ListCalls would list over every page, and
// ignores a cursor and a limit.
func testCallCount(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "a", u.ID)
	base := time.Now()
	all := mustCalls(t, s, base, 700, [3]string{"a", "x", "ok"}, [3]string{"b", "y", "timeout"})
	count := func(f mcpgate.CallFilter) int {
		t.Helper()
		n, err := s.CountCalls(ctx, f)
		must(t, err)
		return n
	}
	mustEqual(t, "all", count(mcpgate.CallFilter{Limit: 10, Cursor: "not a cursor"}), 1400)
	mustEqual(t, "agent a", count(mcpgate.CallFilter{AgentID: "a"}), 700)
	mustEqual(t, "owner", count(mcpgate.CallFilter{OwnerID: u.ID}), 700)
	mustEqual(t, "outcome", count(mcpgate.CallFilter{Outcome: "timeout", Tool: "y"}), 700)
	mustEqual(t, "since", count(mcpgate.CallFilter{Since: all[9].Time}), 10)
	mustEqual(t, "none", count(mcpgate.CallFilter{UserID: "user_2"}), 0)
}
