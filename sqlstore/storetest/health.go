package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func healthTests() []test {
	return []test{
		{"PutAndList", testHealthPutAndList},
		{"Replace", testHealthReplace},
		{"UnknownSkill", testHealthUnknownSkill},
		{"GoesWithSkill", testHealthGoesWithSkill},
	}
}

// mustHealthSkills makes agents a1 and a2 with mcp skills s1 and s2 each.
func mustHealthSkills(tb testing.TB, s mcpgate.Store) {
	tb.Helper()
	u := mustUser(tb, s, "alice")
	for _, a := range []string{"a1", "a2"} {
		mustAgent(tb, s, a, u.ID)
		for _, name := range []string{"s2", "s1"} {
			sk := &mcpgate.Skill{AgentID: a, Name: name, Kind: mcpgate.SkillMCP, URL: "http://127.0.0.1:1/mcp", AutoApprove: true, Source: mcpgate.SourceAPI}
			must(tb, s.PutSkill(context.Background(), sk))
		}
	}
}

func testHealthPutAndList(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustHealthSkills(t, s)
	at := time.Date(2026, 1, 2, 3, 4, 5, 678912345, time.FixedZone("X", 3600))
	want := []*mcpgate.SkillHealth{
		{AgentID: "a1", Skill: "s1", State: mcpgate.HealthConnected, Tools: 3, LastCallAt: &at, ProtocolVersion: "2026-07-28"},
		{AgentID: "a1", Skill: "s2", State: mcpgate.HealthError, LastError: "connection refused", LastErrorAt: &at},
		{AgentID: "a2", Skill: "s1", State: mcpgate.HealthConnecting},
	}
	for _, i := range []int{2, 1, 0} {
		must(t, s.PutSkillHealth(ctx, want[i]))
		mustStoredTime(t, "UpdatedAt", want[i].UpdatedAt)
	}
	got, err := s.ListSkillHealth(ctx, "")
	must(t, err)
	mustEqual(t, "ListSkillHealth all", got, want)
	mustStoredPrecision(t, "LastCallAt", *got[0].LastCallAt)
	got, err = s.ListSkillHealth(ctx, "a1")
	must(t, err)
	mustEqual(t, "ListSkillHealth a1", got, want[:2])
	got, err = s.ListSkillHealth(ctx, "nobody")
	must(t, err)
	mustEqual(t, "ListSkillHealth nobody", got, []*mcpgate.SkillHealth{})
}

func testHealthReplace(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustHealthSkills(t, s)
	at := time.Now()
	h := &mcpgate.SkillHealth{AgentID: "a1", Skill: "s1", State: mcpgate.HealthError, LastError: "boom", LastErrorAt: &at}
	must(t, s.PutSkillHealth(ctx, h))
	first := h.UpdatedAt
	tick(first)
	h = &mcpgate.SkillHealth{AgentID: "a1", Skill: "s1", State: mcpgate.HealthConnected, Tools: 7, ProtocolVersion: "2025-11-25"}
	must(t, s.PutSkillHealth(ctx, h))
	if !h.UpdatedAt.After(first) {
		t.Errorf("UpdatedAt = %v, want after %v", h.UpdatedAt, first)
	}
	got, err := s.ListSkillHealth(ctx, "a1")
	must(t, err)
	mustEqual(t, "after replace", got, []*mcpgate.SkillHealth{h})
}

func testHealthUnknownSkill(t *testing.T, s mcpgate.Store) {
	mustHealthSkills(t, s)
	err := s.PutSkillHealth(context.Background(), &mcpgate.SkillHealth{AgentID: "a1", Skill: "nope", State: mcpgate.HealthConnecting})
	mustCode(t, err, mcpgate.EINVALID)
}

func testHealthGoesWithSkill(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustHealthSkills(t, s)
	must(t, s.PutSkillHealth(ctx, &mcpgate.SkillHealth{AgentID: "a1", Skill: "s1", State: mcpgate.HealthConnected}))
	must(t, s.PutSkillHealth(ctx, &mcpgate.SkillHealth{AgentID: "a2", Skill: "s1", State: mcpgate.HealthConnected}))
	must(t, s.DeleteSkill(ctx, "a1", "s1"))
	must(t, s.DeleteAgent(ctx, "a2"))
	got, err := s.ListSkillHealth(ctx, "")
	must(t, err)
	mustEqual(t, "after deletes", got, []*mcpgate.SkillHealth{})
}
