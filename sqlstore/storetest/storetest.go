// Package storetest is the contract suite every mcpgate.Store must pass:
// the sqlite and postgres packages run it against their engines, so that
// both keep exactly the same contract.
//
// It imports only the root package, the standard library and go-cmp; it
// must not import an implementation.
package storetest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpgate/mcpgate"
)

// Run runs the whole suite. Every subtest runs in parallel with a fresh,
// empty store from open, which must close it when the test ends.
func Run(t *testing.T, open func(t *testing.T) mcpgate.Store) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Users", userTests()},
		{"Agents", agentTests()},
		{"Skills", skillTests()},
		{"Keys", keyTests()},
		{"Sessions", sessionTests()},
		{"OAuth", oauthTests()},
		{"SkillHealth", healthTests()},
		{"Tx", txTests()},
		{"Generation", generationTests()},
		{"Concurrency", concurrencyTests()},
		{"Messages", messageTests()},
		{"RateBuckets", rateBucketTests()},
		{"Calls", callTests()},
		{"Idempotency", idempotencyTests()},
		{"Approvals", approvalTests()},
		{"Files", fileTests()},
		{"Webhooks", webhookTests()},
		{"Tasks", taskTests()},
		{"PeerMessages", peerTests()},
		{"StreamEvents", streamEventTests()},
		{"Settings", settingTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, open(t))
				})
			}
		})
	}
}

// test is one test of the suite, run on a fresh store.
type test struct {
	name string
	run  func(t *testing.T, s mcpgate.Store)
}

// mustEqual fails the test when got differs from want. Times compare as
// instants (cmp uses their Equal method) and nil slices equal empty ones.
func mustEqual(tb testing.TB, what string, got, want any) {
	tb.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		tb.Fatalf("%s mismatch (-want +got):\n%s", what, diff)
	}
}

// mustCode fails the test unless err carries the given code.
func mustCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := mcpgate.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// must fails the test on err.
func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// tick waits until the clock has passed t by at least a microsecond, the
// precision the stores keep, so that a time taken next is strictly later.
// It spins for at most a few microseconds; nothing is timed.
func tick(t time.Time) {
	for !time.Now().After(t.Add(time.Microsecond)) {
	}
}

// mustStoredTime fails the test unless t is in UTC with whole microseconds
// and not far from now.
func mustStoredTime(tb testing.TB, what string, t time.Time) {
	tb.Helper()
	mustStoredPrecision(tb, what, t)
	if d := time.Since(t); d < 0 || d > time.Minute {
		tb.Errorf("%s = %v: want about now", what, t)
	}
}

// mustStoredPrecision fails the test unless t is as the stores return
// times: in UTC with whole microseconds.
func mustStoredPrecision(tb testing.TB, what string, t time.Time) {
	tb.Helper()
	if t.Location() != time.UTC || t.Nanosecond()%1000 != 0 {
		tb.Errorf("%s = %v: want UTC with whole microseconds", what, t)
	}
}

func mustUser(tb testing.TB, s mcpgate.Store, name string) *mcpgate.User {
	tb.Helper()
	u := &mcpgate.User{Name: name, PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA", Source: mcpgate.SourceCLI}
	must(tb, s.CreateUser(context.Background(), u))
	return u
}

func mustAgent(tb testing.TB, s mcpgate.Store, id, ownerID string) *mcpgate.Agent {
	tb.Helper()
	a := &mcpgate.Agent{ID: id, Name: "Agent " + id, Description: "does " + id, OwnerID: ownerID, MCPEnabled: true, Source: mcpgate.SourceAPI}
	must(tb, s.CreateAgent(context.Background(), a))
	return a
}

func mustKey(tb testing.TB, s mcpgate.Store, k *mcpgate.APIKey) *mcpgate.APIKey {
	tb.Helper()
	if k.Hash == "" {
		k.Hash = fmt.Sprintf("%x", sha256.Sum256([]byte(mcpgate.NewID("secret_"))))
	}
	if k.Hint == "" {
		k.Hint = "oag_abcd"
	}
	must(tb, s.CreateKey(context.Background(), k))
	return k
}

func mustSession(tb testing.TB, s mcpgate.Store, id, agentID string) *mcpgate.Session {
	tb.Helper()
	ss := &mcpgate.Session{ID: id, AgentID: agentID, Identity: "user:u1", ProtocolVersion: "2025-11-25"}
	must(tb, s.CreateSession(context.Background(), ss))
	return ss
}

func mustGeneration(tb testing.TB, s mcpgate.Store) int64 {
	tb.Helper()
	g, err := s.Generation(context.Background())
	must(tb, err)
	return g
}
