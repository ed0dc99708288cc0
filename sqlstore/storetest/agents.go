package storetest

import (
	"context"
	"testing"

	"github.com/mcpgate/mcpgate"
)

func agentTests() []test {
	return []test{
		{"CreateAndFind", testAgentCreateAndFind},
		{"CreateErrors", testAgentCreateErrors},
		{"Update", testAgentUpdate},
		{"UpdateErrors", testAgentUpdateErrors},
		{"List", testAgentList},
		{"DeleteCascades", testAgentDelete},
	}
}

func testAgentCreateAndFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	a := &mcpgate.Agent{ID: "weather", Name: "Weather", Description: "Forecasts", OwnerID: u.ID, Source: mcpgate.SourceConfig}
	must(t, s.CreateAgent(ctx, a))
	mustStoredTime(t, "CreatedAt", a.CreatedAt)
	mustEqual(t, "UpdatedAt", a.UpdatedAt, a.CreatedAt)
	got, err := s.FindAgent(ctx, "weather")
	must(t, err)
	mustEqual(t, "FindAgent", got, a)
	_, err = s.FindAgent(ctx, "missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testAgentCreateErrors(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustCode(t, s.CreateAgent(ctx, &mcpgate.Agent{ID: "weather", OwnerID: u.ID}), mcpgate.ECONFLICT)
	mustCode(t, s.CreateAgent(ctx, &mcpgate.Agent{ID: "orphan", OwnerID: "usr_missing"}), mcpgate.EINVALID)
	_, err := s.FindAgent(ctx, "orphan")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testAgentUpdate(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	a := mustAgent(t, s, "weather", alice.ID)
	created := a.CreatedAt
	tick(a.UpdatedAt)
	a.Name, a.Description, a.OwnerID, a.MCPEnabled, a.Source = "Météo", "", bob.ID, false, mcpgate.SourceCLI
	must(t, s.UpdateAgent(ctx, a))
	mustEqual(t, "CreatedAt", a.CreatedAt, created)
	if !a.UpdatedAt.After(created) {
		t.Errorf("UpdatedAt = %v, want after %v", a.UpdatedAt, created)
	}
	got, err := s.FindAgent(ctx, "weather")
	must(t, err)
	mustEqual(t, "updated agent", got, a)
}

func testAgentUpdateErrors(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	a := mustAgent(t, s, "weather", u.ID)
	mustCode(t, s.UpdateAgent(ctx, &mcpgate.Agent{ID: "missing", OwnerID: u.ID}), mcpgate.ENOTFOUND)
	a.OwnerID = "usr_missing"
	mustCode(t, s.UpdateAgent(ctx, a), mcpgate.EINVALID)
	got, err := s.FindAgent(ctx, "weather")
	must(t, err)
	mustEqual(t, "owner", got.OwnerID, u.ID)
}

func testAgentList(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	c := mustAgent(t, s, "c-agent", alice.ID)
	a := mustAgent(t, s, "a-agent", bob.ID)
	b := mustAgent(t, s, "b-agent", alice.ID)
	for _, tc := range []struct {
		name string
		f    mcpgate.AgentFilter
		want []*mcpgate.Agent
	}{
		{"all", mcpgate.AgentFilter{}, []*mcpgate.Agent{a, b, c}},
		{"alice", mcpgate.AgentFilter{OwnerID: alice.ID}, []*mcpgate.Agent{b, c}},
		{"bob", mcpgate.AgentFilter{OwnerID: bob.ID}, []*mcpgate.Agent{a}},
		{"nobody", mcpgate.AgentFilter{OwnerID: "usr_missing"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListAgents(ctx, tc.f)
			must(t, err)
			mustEqual(t, "ListAgents", got, tc.want)
		})
	}
}

func testAgentDelete(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	other := mustAgent(t, s, "other", u.ID)
	must(t, s.PutSkill(ctx, sampleSkill("weather", "forecast")))
	must(t, s.PutSkill(ctx, sampleSkill("other", "forecast")))
	agentKey := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyAgent, UserID: u.ID, AgentID: "weather"})
	userKey := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID})
	mustSession(t, s, "sess-weather", "weather")
	mustSession(t, s, "sess-other", "other")

	must(t, s.DeleteAgent(ctx, "weather"))
	_, err := s.FindAgent(ctx, "weather")
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindSkill(ctx, "weather", "forecast")
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindKey(ctx, agentKey.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindSession(ctx, "sess-weather")
	mustCode(t, err, mcpgate.ENOTFOUND)
	skills, err := s.ListSkills(ctx, "")
	must(t, err)
	mustEqual(t, "skills left", len(skills), 1)

	_, err = s.FindKey(ctx, userKey.ID)
	must(t, err)
	_, err = s.FindSession(ctx, "sess-other")
	must(t, err)
	got, err := s.FindAgent(ctx, other.ID)
	must(t, err)
	mustEqual(t, "other agent", got, other)
	mustCode(t, s.DeleteAgent(ctx, "weather"), mcpgate.ENOTFOUND)
}
