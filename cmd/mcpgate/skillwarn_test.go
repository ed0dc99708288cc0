package main

import (
	"context"
	"strings"
	"testing"
)

// agent show warns of a skill's ${env:NAME} whose variable is not set,
// until it is (issue 12).
func TestCLIAgentShowWarnsOfUnsetVariables(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRunCLI(t, dir, "init")
	mustRunCLI(t, dir, "user", "create", "alice")
	mustSeedAgent(t, dir, "alice", "invoices")
	ctx := context.Background()
	sf := storeFlags{dataDir: dir}
	s, err := sf.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := s.FindSkill(ctx, "invoices", "billing")
	if err == nil {
		sk.Headers = map[string]string{"Authorization": "Bearer ${env:NC_TOKEN}"}
		err = s.PutSkill(ctx, sk)
	}
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	const want = "  warning: headers.Authorization: environment variable NC_TOKEN is not set; the skill's calls fail until it is set\n"
	if out, _, err := runCLI(t, nil, "agent", "show", "invoices", "--data-dir", dir); err != nil || !strings.Contains(out, want) {
		t.Errorf("agent show without NC_TOKEN: %v\n%s", err, out)
	}
	if out, _, err := runCLI(t, map[string]string{"NC_TOKEN": "x"}, "agent", "show", "invoices", "--data-dir", dir); err != nil || strings.Contains(out, "warning") {
		t.Errorf("agent show with NC_TOKEN: %v\n%s", err, out)
	}
}
