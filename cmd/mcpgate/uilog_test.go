package main

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/ui"
)

// TestUICallLog reads the audit log as the dashboard does: AgentIDs nil
// is every agent, empty none, and a status filter and count.
func TestUICallLog(t *testing.T) {
	ctx := context.Background()
	sf := storeFlags{dataDir: t.TempDir()}
	s, err := sf.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now().Add(-time.Minute)
	calls := []*mcpgate.CallRecord{
		{AgentID: "a", Tool: "x", Outcome: mcpgate.OutcomeOK, Time: t0, UserID: "u1"},
		{AgentID: "a", Tool: "y", Outcome: mcpgate.OutcomeRejected, Time: t0.Add(time.Second)},
		{AgentID: "b", Tool: "x", Outcome: mcpgate.OutcomeReplayed, Time: t0.Add(2 * time.Second)},
	}
	if err := s.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	l := uiCallLog{store: s}
	for _, tc := range []struct {
		name string
		f    ui.CallFilter
		want []string
	}{
		{"all", ui.CallFilter{}, []string{calls[2].ID, calls[1].ID, calls[0].ID}},
		{"none", ui.CallFilter{AgentIDs: []string{}}, nil},
		{"own", ui.CallFilter{AgentIDs: []string{"a"}}, []string{calls[1].ID, calls[0].ID}},
		{"another's", ui.CallFilter{AgentIDs: []string{"a"}, AgentID: "b"}, nil},
		{"errors", ui.CallFilter{Status: "error"}, []string{calls[1].ID}},
		{"limit", ui.CallFilter{Limit: 1}, []string{calls[2].ID}},
	} {
		got, err := l.ListCalls(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		if len(ids) != len(tc.want) || (len(ids) > 0 && ids[0] != tc.want[0]) {
			t.Errorf("%s: %q, want %q", tc.name, ids, tc.want)
		}
		if n, _ := l.CountCalls(ctx, tc.f); tc.f.Limit == 0 && n != len(tc.want) {
			t.Errorf("%s: count %d, want %d", tc.name, n, len(tc.want))
		}
	}
	c, err := l.FindCall(ctx, calls[1].ID)
	if err != nil || c.Status != "error" || c.Error != "rejected" {
		t.Fatalf("FindCall = %+v, %v", c, err)
	}
	if c, _ := l.FindCall(ctx, calls[0].ID); c.Caller != "user:u1" || c.Status != "ok" {
		t.Fatalf("FindCall = %+v", c)
	}
}
