package config

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpgate/mcpgate"
)

// kindsFile declares one skill of each kind that is not rest.
const kindsFile = `
users: [{name: alice}]
agents:
  - id: research
    owner: alice
    mcp_enabled: true
    skills:
      - name: search
        kind: mcp
        url: http://127.0.0.1:3001/mcp
        allow_private: true
        headers: {Authorization: "Bearer ${env:SEARCH_TOKEN}"}
        prefix: search_
      - name: files
        kind: mcp
        command: /usr/local/bin/files-mcp
        args: ["--root", "/srv/data"]
        env: {LOG_LEVEL: info, FILES_TOKEN: "${env:FILES_TOKEN}"}
        cwd: /srv
      - name: analyst
        kind: agent
        timeout: 30s
        tools:
          - name: csv_query
            description: Run a structured query.
            input_schema: {type: object, properties: {column: {type: string}}}
      - name: pusher
        kind: agent
        delivery: push
        push_url: http://127.0.0.1:9100/inbox
        push_secret: ${env:PUSH_SECRET}
        allow_private: true
`

// kindsEnv sets the variables kindsFile names.
func kindsEnv(name string) (string, bool) {
	v, ok := map[string]string{"SEARCH_TOKEN": "s", "FILES_TOKEN": "f", "PUSH_SECRET": "p"}[name]
	return v, ok
}

func TestParseKinds(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, kindsFile, kindsEnv)
	got := cfg.Agents[0].Skills
	want := []*mcpgate.Skill{
		{AgentID: "research", Name: "search", Kind: mcpgate.SkillMCP, Prefix: "search_", URL: "http://127.0.0.1:3001/mcp",
			AllowPrivate: true, Headers: map[string]string{"Authorization": "Bearer ${env:SEARCH_TOKEN}"}},
		{AgentID: "research", Name: "files", Kind: mcpgate.SkillMCP, Command: "/usr/local/bin/files-mcp",
			Args: []string{"--root", "/srv/data"}, Env: map[string]string{"LOG_LEVEL": "info", "FILES_TOKEN": "${env:FILES_TOKEN}"}, Cwd: "/srv"},
		{AgentID: "research", Name: "analyst", Kind: mcpgate.SkillAgent, Delivery: mcpgate.DeliveryPull,
			Timeout: mcpgate.Duration(30e9), Tools: []*mcpgate.Tool{{Name: "csv_query", Description: "Run a structured query.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"column":{"type":"string"}}}`)}}},
		{AgentID: "research", Name: "pusher", Kind: mcpgate.SkillAgent, Delivery: mcpgate.DeliveryPush,
			PushURL: "http://127.0.0.1:9100/inbox", PushSecret: "${env:PUSH_SECRET}", AllowPrivate: true},
	}
	opts := cmp.Options{cmpopts.IgnoreFields(mcpgate.Skill{}, "AutoApprove", "Source"), cmpopts.EquateEmpty()}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
}

// An mcp skill's tools come from its upstream: applying the file again
// keeps the tools discovery stored instead of emptying them.
func TestApplyKeepsDiscoveredTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	mustApply(t, store, kindsFile, kindsEnv)
	sk, err := store.FindSkill(ctx, "research", "search")
	if err != nil {
		t.Fatal(err)
	}
	sk.Tools = []*mcpgate.Tool{{Name: "find", Upstream: "find", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	if err := store.PutSkill(ctx, sk); err != nil {
		t.Fatal(err)
	}
	if ch := mustApply(t, store, kindsFile, kindsEnv); !ch.Empty() {
		t.Errorf("second apply changed %s", ch)
	}
	again, err := store.FindSkill(ctx, "research", "search")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Tools) != 1 || again.Tools[0].Upstream != "find" {
		t.Errorf("tools after apply = %+v, want the discovered one", again.Tools)
	}
}

// A stdio upstream's args are its argv: any strings, empty ones included;
// anything else is refused as what it is, not as an operation pattern.
func TestMCPArgs(t *testing.T) {
	t.Parallel()
	file := func(args string) string {
		return "users: [{name: alice}]\nagents:\n  - id: a\n    owner: alice\n    skills:\n      - name: s\n        kind: mcp\n        command: /bin/srv\n        args: " + args + "\n"
	}
	cfg := mustParse(t, file(`["", "--flag", "x y"]`), env(nil))
	if diff := cmp.Diff([]string{"", "--flag", "x y"}, cfg.Agents[0].Skills[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	_, err := Parse("mcpgate.yaml", []byte(file(`["--ok", [1]]`)), env(nil))
	if err == nil || !strings.Contains(err.Error(), "args[1]") || !strings.Contains(err.Error(), "must be a string") || strings.Contains(err.Error(), "pattern") {
		t.Errorf("a list inside args: err = %v, want args[1] must be a string", err)
	}
}
