package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TestCLIApprovals lists a pending approval, approves it with a reason and
// refuses a second, late decision (the first wins).
func TestCLIApprovals(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	sf := storeFlags{dataDir: dir}
	s, err := sf.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := &mcpgate.Approval{AgentID: "files", Skill: "fs", Tool: "delete", Arguments: []byte(`{"path":"/tmp/x"}`), ArgsHash: "h",
		Identity: "user:u1", RequestedAt: time.Now(), Deadline: time.Now().Add(time.Minute)}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if out := mustRunCLI(t, dir, "approvals", "list", "--state", "pending"); !strings.Contains(out, a.ID) || !strings.Contains(out, `{"path":"/tmp/x"}`) {
		t.Fatalf("list:\n%s", out)
	}
	if out := mustRunCLI(t, dir, "approvals", "approve", a.ID, "--reason", "fine", "--as", "alice"); !strings.Contains(out, "approved") {
		t.Fatalf("approve: %s", out)
	}
	_, _, err = runCLI(t, nil, "approvals", "reject", a.ID, "--data-dir", dir)
	if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		t.Fatalf("late reject: %v; want conflict", err)
	}
	if out := mustRunCLI(t, dir, "approvals", "list", "--json"); !strings.Contains(out, `"reviewer": "alice"`) || !strings.Contains(out, `"reason": "fine"`) {
		t.Fatalf("list --json:\n%s", out)
	}
}
