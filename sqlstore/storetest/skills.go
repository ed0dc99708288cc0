package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func skillTests() []test {
	return []test{
		{"PutAndFind", testSkillPutAndFind},
		{"PutErrors", testSkillPutErrors},
		{"PutEqualChangesNothing", testSkillPutEqual},
		{"PutChange", testSkillPutChange},
		{"ReplaceTools", testSkillReplaceTools},
		{"Order", testSkillOrder},
		{"Delete", testSkillDelete},
	}
}

// sampleSkill returns a rest skill using every setting, with tools declared
// out of alphabetical order.
func sampleSkill(agentID, name string) *mcpgate.Skill {
	return &mcpgate.Skill{
		AgentID:          agentID,
		Name:             name,
		Kind:             mcpgate.SkillREST,
		Prefix:           "wx_",
		BaseURL:          "https://api.example.test/v1",
		AllowPrivate:     true,
		Headers:          map[string]string{"Authorization": "Bearer ${env:WX_TOKEN}", "Accept": "application/json"},
		Timeout:          mcpgate.Duration(30 * time.Second),
		AutoApprove:      true,
		ApprovalTimeout:  mcpgate.Duration(2 * time.Minute),
		MaxResponseBytes: 4096,
		Source:           mcpgate.SourceConfig,
		Tools: []*mcpgate.Tool{
			{
				Name:         "today",
				Title:        "Today",
				Description:  "Today's forecast",
				InputSchema:  json.RawMessage(`{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}`),
				OutputSchema: json.RawMessage(`{"type":"object"}`),
				Annotations:  json.RawMessage(`{"readOnlyHint":true}`),
				Request: &mcpgate.Request{
					Method:  "GET",
					Path:    "/forecast/{city}",
					Query:   map[string]string{"units": "metric"},
					Headers: map[string]string{"X-City": "{city}"},
					Body:    &mcpgate.RequestBody{Mode: mcpgate.BodyNone},
					Timeout: mcpgate.Duration(5 * time.Second),
				},
			},
			{
				Name:        "alerts",
				InputSchema: json.RawMessage(`{"type":"object"}`),
				Request: &mcpgate.Request{
					Method: "POST",
					URL:    "https://alerts.example.test/q",
					Body:   &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: json.RawMessage(`{"q":"{city}"}`)},
				},
			},
			{
				Name:        "batch",
				InputSchema: json.RawMessage(`{"type":"object"}`),
				Request:     &mcpgate.Request{Method: "POST", Path: "/batch", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyFields, Fields: []string{"a", "b"}}},
			},
		},
	}
}

// mustSkillAgent creates a user and an agent of it for each given ID.
func mustSkillAgent(tb testing.TB, s mcpgate.Store, agentIDs ...string) {
	tb.Helper()
	u := mustUser(tb, s, "owner")
	for _, id := range agentIDs {
		mustAgent(tb, s, id, u.ID)
	}
}

func testSkillPutAndFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustSkillAgent(t, s, "weather")
	sk := sampleSkill("weather", "forecast")
	must(t, s.PutSkill(ctx, sk))
	mustStoredTime(t, "CreatedAt", sk.CreatedAt)
	mustEqual(t, "UpdatedAt", sk.UpdatedAt, sk.CreatedAt)
	got, err := s.FindSkill(ctx, "weather", "forecast")
	must(t, err)
	mustEqual(t, "FindSkill", got, sk)

	bare := &mcpgate.Skill{AgentID: "weather", Name: "upstream", Kind: mcpgate.SkillMCP}
	must(t, s.PutSkill(ctx, bare))
	got, err = s.FindSkill(ctx, "weather", "upstream")
	must(t, err)
	mustEqual(t, "bare skill", got, bare)

	_, err = s.FindSkill(ctx, "weather", "missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindSkill(ctx, "missing", "forecast")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testSkillPutErrors(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustSkillAgent(t, s, "weather")
	gen := mustGeneration(t, s)
	mustCode(t, s.PutSkill(ctx, sampleSkill("missing", "forecast")), mcpgate.EINVALID)

	twice := sampleSkill("weather", "forecast")
	twice.Tools = append(twice.Tools, twice.Tools[0])
	mustCode(t, s.PutSkill(ctx, twice), mcpgate.EINVALID)
	_, err := s.FindSkill(ctx, "weather", "forecast")
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustEqual(t, "generation", mustGeneration(t, s), gen)
}

func testSkillPutEqual(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustSkillAgent(t, s, "weather")
	first := sampleSkill("weather", "forecast")
	must(t, s.PutSkill(ctx, first))
	gen := mustGeneration(t, s)
	tick(first.UpdatedAt)

	again := sampleSkill("weather", "forecast")
	must(t, s.PutSkill(ctx, again))
	mustEqual(t, "returned UpdatedAt", again.UpdatedAt, first.UpdatedAt)
	mustEqual(t, "returned CreatedAt", again.CreatedAt, first.CreatedAt)
	got, err := s.FindSkill(ctx, "weather", "forecast")
	must(t, err)
	mustEqual(t, "stored skill", got, first)
	mustEqual(t, "generation", mustGeneration(t, s), gen)
}

func testSkillPutChange(t *testing.T, s mcpgate.Store) {
	changes := []struct {
		name   string
		change func(sk *mcpgate.Skill)
	}{
		{"setting", func(sk *mcpgate.Skill) { sk.AutoApprove = false }},
		{"header", func(sk *mcpgate.Skill) { sk.Headers["Accept"] = "text/plain" }},
		{"kind", func(sk *mcpgate.Skill) { sk.Kind = mcpgate.SkillAgent }},
		{"source", func(sk *mcpgate.Skill) { sk.Source = mcpgate.SourceAPI }},
		{"tool", func(sk *mcpgate.Skill) { sk.Tools[1].Description = "Weather alerts" }},
		{"tool order", func(sk *mcpgate.Skill) { sk.Tools[0], sk.Tools[1] = sk.Tools[1], sk.Tools[0] }},
		{"tool removed", func(sk *mcpgate.Skill) { sk.Tools = sk.Tools[:2] }},
	}
	ctx := context.Background()
	mustSkillAgent(t, s, "weather")
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			must(t, s.PutSkill(ctx, sampleSkill("weather", c.name)))
			before, err := s.FindSkill(ctx, "weather", c.name)
			must(t, err)
			gen := mustGeneration(t, s)
			tick(before.UpdatedAt)

			sk := sampleSkill("weather", c.name)
			c.change(sk)
			must(t, s.PutSkill(ctx, sk))
			mustEqual(t, "CreatedAt", sk.CreatedAt, before.CreatedAt)
			if !sk.UpdatedAt.After(before.UpdatedAt) {
				t.Errorf("UpdatedAt = %v, want after %v", sk.UpdatedAt, before.UpdatedAt)
			}
			mustEqual(t, "generation", mustGeneration(t, s), gen+1)
			got, err := s.FindSkill(ctx, "weather", c.name)
			must(t, err)
			mustEqual(t, "changed skill", got, sk)
		})
	}
}

func testSkillReplaceTools(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustSkillAgent(t, s, "weather")
	must(t, s.PutSkill(ctx, sampleSkill("weather", "forecast")))
	sk := sampleSkill("weather", "forecast")
	sk.Tools = []*mcpgate.Tool{{Name: "tomorrow", InputSchema: json.RawMessage(`{"type":"object"}`)}, sk.Tools[2]}
	must(t, s.PutSkill(ctx, sk))
	got, err := s.FindSkill(ctx, "weather", "forecast")
	must(t, err)
	mustEqual(t, "tools", got.Tools, sk.Tools)

	sk.Tools = nil
	must(t, s.PutSkill(ctx, sk))
	got, err = s.FindSkill(ctx, "weather", "forecast")
	must(t, err)
	mustEqual(t, "no tools", len(got.Tools), 0)
}

func testSkillOrder(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustSkillAgent(t, s, "b-agent", "a-agent")
	for _, name := range []string{"zeta", "alpha", "mid"} {
		must(t, s.PutSkill(ctx, sampleSkill("b-agent", name)))
	}
	must(t, s.PutSkill(ctx, sampleSkill("a-agent", "only")))
	changed := sampleSkill("b-agent", "zeta")
	changed.Prefix = "z_"
	must(t, s.PutSkill(ctx, changed))
	must(t, s.DeleteSkill(ctx, "b-agent", "alpha"))
	must(t, s.PutSkill(ctx, sampleSkill("b-agent", "alpha")))

	for _, tc := range []struct {
		agentID string
		want    []string
	}{
		{"b-agent", []string{"b-agent/zeta", "b-agent/mid", "b-agent/alpha"}},
		{"a-agent", []string{"a-agent/only"}},
		{"", []string{"a-agent/only", "b-agent/zeta", "b-agent/mid", "b-agent/alpha"}},
		{"missing", nil},
	} {
		skills, err := s.ListSkills(ctx, tc.agentID)
		must(t, err)
		var names []string
		for _, sk := range skills {
			names = append(names, sk.AgentID+"/"+sk.Name)
			mustEqual(t, "tools of "+sk.Name, toolNames(sk), []string{"today", "alerts", "batch"})
		}
		mustEqual(t, "ListSkills("+tc.agentID+")", names, tc.want)
	}
	got, err := s.ListSkills(ctx, "b-agent")
	must(t, err)
	mustEqual(t, "listed skill", got[0], changed)
}

func toolNames(sk *mcpgate.Skill) []string {
	var names []string
	for _, t := range sk.Tools {
		names = append(names, t.Name)
	}
	return names
}

func testSkillDelete(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustSkillAgent(t, s, "weather")
	must(t, s.PutSkill(ctx, sampleSkill("weather", "forecast")))
	kept := sampleSkill("weather", "kept")
	must(t, s.PutSkill(ctx, kept))
	gen := mustGeneration(t, s)

	must(t, s.DeleteSkill(ctx, "weather", "forecast"))
	mustEqual(t, "generation", mustGeneration(t, s), gen+1)
	_, err := s.FindSkill(ctx, "weather", "forecast")
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustCode(t, s.DeleteSkill(ctx, "weather", "forecast"), mcpgate.ENOTFOUND)
	mustCode(t, s.DeleteSkill(ctx, "missing", "kept"), mcpgate.ENOTFOUND)
	skills, err := s.ListSkills(ctx, "weather")
	must(t, err)
	mustEqual(t, "skills left", skills, []*mcpgate.Skill{kept})

	// Putting it again starts it afresh, with its tools.
	again := sampleSkill("weather", "forecast")
	must(t, s.PutSkill(ctx, again))
	got, err := s.FindSkill(ctx, "weather", "forecast")
	must(t, err)
	mustEqual(t, "put again", got, again)
}
