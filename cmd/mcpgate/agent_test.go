package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// TestCLIAgentCountsServedTools checks that agent list and agent show
// count and list what tools/list serves: an agent skill's chat tool too,
// which the registry adds and the stored skill does not hold.
func TestCLIAgentCountsServedTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init")
	mustRunCLI(t, dir, "user", "create", "alice")
	mustSeedAgent(t, dir, "alice", "invoices")
	mustPutSkill(t, dir, &mcpgate.Skill{AgentID: "invoices", Name: "orders", Kind: mcpgate.SkillAgent, Delivery: "pull", AutoApprove: true, Source: mcpgate.SourceCLI})
	list := mustRunCLI(t, dir, "agent", "list")
	if !regexp.MustCompile(`(?m)^invoices\s+Invoice assistant\s+alice\s+true\s+2\s+2\s+cli$`).MatchString(list) {
		t.Errorf("agent list, want 2 skills and 2 tools (get_invoice and the chat tool orders):\n%s", list)
	}
	show := mustRunCLI(t, dir, "agent", "show", "invoices")
	for _, want := range []string{"Skill orders (kind agent", "  - orders: ", "  - get_invoice: Fetch one invoice.\n"} {
		if !strings.Contains(show, want) {
			t.Errorf("agent show lacks %q:\n%s", want, show)
		}
	}
}

// mustPutSkill stores a skill in the data dir.
func mustPutSkill(t *testing.T, dir string, sk *mcpgate.Skill) {
	t.Helper()
	ctx := context.Background()
	sf := storeFlags{dataDir: dir}
	s, err := sf.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutSkill(ctx, sk); err != nil {
		t.Fatal(err)
	}
}
