package storetest

import (
	"context"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// Snapshot is a store's whole content, for tests that check an operation
// changed nothing (or exactly what they expect), compared with go-cmp.
type Snapshot struct {
	Generation int64
	Users      []*mcpgate.User
	Agents     []*mcpgate.Agent
	Skills     []*mcpgate.Skill
	Keys       []*mcpgate.APIKey
}

// MustSnapshot reads s's content, failing tb on any error.
func MustSnapshot(tb testing.TB, s mcpgate.Store) *Snapshot {
	tb.Helper()
	ctx := context.Background()
	var snap Snapshot
	var err error
	if snap.Generation, err = s.Generation(ctx); err != nil {
		tb.Fatal(err)
	}
	if snap.Users, err = s.ListUsers(ctx); err != nil {
		tb.Fatal(err)
	}
	if snap.Agents, err = s.ListAgents(ctx, mcpgate.AgentFilter{}); err != nil {
		tb.Fatal(err)
	}
	if snap.Skills, err = s.ListSkills(ctx, ""); err != nil {
		tb.Fatal(err)
	}
	if snap.Keys, err = s.ListKeys(ctx, mcpgate.KeyFilter{}); err != nil {
		tb.Fatal(err)
	}
	return &snap
}
