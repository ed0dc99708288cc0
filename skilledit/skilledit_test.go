package skilledit_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/skilledit"
	"github.com/mcpgate/mcpgate/sqlite"
)

// fixture is a store with one agent.
func fixture(t *testing.T) mcpgate.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "mcpgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	u := &mcpgate.User{Name: "alice", Source: mcpgate.SourceCLI}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, &mcpgate.Agent{ID: "shop", OwnerID: u.ID, Source: mcpgate.SourceCLI}); err != nil {
		t.Fatal(err)
	}
	return s
}

// skill is a valid rest skill with one tool.
func skill(name, tool string) *mcpgate.Skill {
	return &mcpgate.Skill{
		AgentID: "shop", Name: name, Kind: mcpgate.SkillREST, BaseURL: "https://api.example.com", AutoApprove: true,
		Tools: []*mcpgate.Tool{{Name: tool, InputSchema: json.RawMessage(`{"type":"object"}`), Request: &mcpgate.Request{Method: "GET", Path: "/"}}},
	}
}

// put returns an edit that replaces the skill with s.
func put(s *mcpgate.Skill) skilledit.Edit {
	return func(*mcpgate.Skill) (*mcpgate.Skill, error) { return s, nil }
}

func TestApply(t *testing.T) {
	ctx := context.Background()
	st := fixture(t)
	got, err := skilledit.Apply(ctx, st, "shop", "a", mcpgate.SourceAPI, put(skill("a", "x")))
	if err != nil || got.Source != mcpgate.SourceAPI {
		t.Fatalf("create: %v, %+v", err, got)
	}
	// A replaced skill keeps its source.
	if got, err = skilledit.Apply(ctx, st, "shop", "a", mcpgate.SourceCLI, put(skill("a", "y"))); err != nil || got.Source != mcpgate.SourceAPI {
		t.Fatalf("replace: %v, %+v", err, got)
	}
	// A clash with another skill is ECONFLICT and writes nothing.
	if _, err := skilledit.Apply(ctx, st, "shop", "b", mcpgate.SourceAPI, put(skill("b", "y"))); mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		t.Fatalf("clash: %v", err)
	}
	// The skill's checks apply: a literal secret is refused. (They were the
	// config file's, reported as config.Errors; they are now the skill's
	// own, reported as mcpgate.Problems with the same fields.)
	bad := skill("c", "z")
	bad.Headers = map[string]string{"Authorization": "Bearer literal"}
	_, err = skilledit.Apply(ctx, st, "shop", "c", mcpgate.SourceAPI, put(bad))
	var errs mcpgate.Problems
	if mcpgate.ErrorCode(err) != mcpgate.EINVALID || !errors.As(err, &errs) || errs[0].Field != "headers.Authorization" {
		t.Fatalf("literal secret: %v", err)
	}
	// A nil result deletes.
	if _, err := skilledit.Apply(ctx, st, "shop", "a", mcpgate.SourceAPI, put(nil)); err != nil {
		t.Fatal(err)
	}
	if skills, _ := st.ListSkills(ctx, "shop"); len(skills) != 0 {
		t.Errorf("skills after delete = %d", len(skills))
	}
}
