package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// env returns a lookup over fixed variables.
func env(vars map[string]string) mcpgate.LookupFunc {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// exampleEnv sets the variables testdata/example.yaml references.
var exampleEnv = env(map[string]string{"ALICE_PASSWORD": "correct horse", "BILLING_TOKEN": "tok_123",
	"SEARCH_TOKEN": "s", "FILES_TOKEN": "f", "NOTIFIER_PUSH_SECRET": "p"})

// mustParse parses a config that must be valid.
func mustParse(tb testing.TB, text string, lookup mcpgate.LookupFunc) *Config {
	tb.Helper()
	c, err := Parse("mcpgate.yaml", []byte(text), lookup)
	if err != nil {
		tb.Fatalf("Parse:\n%v", err)
	}
	return c
}

// mustRead reads a file under testdata.
func mustRead(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestLoadExample(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "example.yaml"), exampleEnv)
	if err != nil {
		t.Fatalf("Load:\n%v", err)
	}
	if research := c.Agents[1].Skills; len(research) != 4 || research[0].URL == "" || research[1].Command == "" ||
		research[2].Delivery != mcpgate.DeliveryPull || research[3].PushSecret != "${env:NOTIFIER_PUSH_SECRET}" {
		t.Errorf("research skills %+v", research)
	}
	if len(c.Users) != 2 || !c.Users[0].HasPassword() || c.Users[1].HasPassword() || !c.Users[0].Admin {
		t.Errorf("users %+v", c.Users)
	}
	if len(c.Agents) != 3 || c.Agents[2].Skills[0].Tools[0].Name != "get_forecast" || c.Agents[2].Skills[0].Prefix != "wx_" {
		t.Errorf("agents %+v", c.Agents)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if mcpgate.ErrorCode(err) != mcpgate.EINVALID {
		t.Errorf("error %v, want EINVALID", err)
	}
}

func TestParseBuildsDomainObjects(t *testing.T) {
	const file = `users:
  - name: alice
    password: s3cret
agents:
  - id: shop
    name: Shop
    description: Sells things.
    owner: alice
    mcp_enabled: true
    skills:
      - name: orders
        kind: rest
        prefix: shop_
        base_url: https://api.example.com/v2
        headers: {X-Api-Key: "${env:SHOP_KEY}", Accept: application/json}
        timeout: 1m30s
        approval_timeout: 2m
        max_response_bytes: 4096
        tools:
          - name: find
            title: Find orders
            input_schema:
              type: object
              properties: {q: {type: string}, limit: {type: integer, maximum: 100}}
            output_schema: {type: object}
            annotations: {readOnlyHint: true, title: Find}
            request:
              path: /orders
              query: {q: "{q}", limit: "{limit}"}
              timeout: 5s
          - name: create
            input_schema: {type: object, properties: {item: {type: string}, qty: {type: number}}}
            request:
              method: post
              path: /orders
              body: {order: {item: "{item}", quantity: "{qty}"}, note: 2024-01-02, flag: null}
          - name: cancel
            input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
            request: {method: DELETE, path: "/orders/{id}", body: none}
          - name: all
            input_schema: {type: object}
            request: {method: PUT, url: "https://other.example.com/x", body: all}
`
	c := mustParse(t, file, env(map[string]string{"SHOP_KEY": "k"}))
	want := &mcpgate.Skill{
		AgentID: "shop", Name: "orders", Kind: mcpgate.SkillREST, Prefix: "shop_",
		BaseURL: "https://api.example.com/v2",
		Headers: map[string]string{"X-Api-Key": "${env:SHOP_KEY}", "Accept": "application/json"},
		Timeout: mcpgate.Duration(90 * time.Second), AutoApprove: true,
		ApprovalTimeout: mcpgate.Duration(2 * time.Minute), MaxResponseBytes: 4096, Source: mcpgate.SourceConfig,
		Tools: []*mcpgate.Tool{{
			Name: "find", Title: "Find orders",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","maximum":100}}}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations:  json.RawMessage(`{"readOnlyHint":true,"title":"Find"}`),
			Request: &mcpgate.Request{Method: "GET", Path: "/orders", Query: map[string]string{"q": "{q}", "limit": "{limit}"},
				Timeout: mcpgate.Duration(5 * time.Second)},
		}, {
			Name:        "create",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"item":{"type":"string"},"qty":{"type":"number"}}}`),
			Request: &mcpgate.Request{Method: "POST", Path: "/orders", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate,
				Template: json.RawMessage(`{"order":{"item":"{item}","quantity":"{qty}"},"note":"2024-01-02","flag":null}`)}},
		}, {
			Name:        "cancel",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
			Request:     &mcpgate.Request{Method: "DELETE", Path: "/orders/{id}", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyNone}},
		}, {
			Name:        "all",
			InputSchema: json.RawMessage(`{"type":"object"}`),
			Request:     &mcpgate.Request{Method: "PUT", URL: "https://other.example.com/x", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyAll}},
		}},
	}
	if diff := cmp.Diff(want, c.Agents[0].Skills[0]); diff != "" {
		t.Errorf("skill (-want +got):\n%s", diff)
	}
	a := c.Agents[0]
	if a.ID != "shop" || a.Name != "Shop" || a.Description != "Sells things." || a.Owner != "alice" || !a.MCPEnabled {
		t.Errorf("agent %+v", a)
	}
	if c.Users[0].Name != "alice" || !c.Users[0].HasPassword() {
		t.Errorf("user %+v", c.Users[0])
	}
}

func TestParseEmpty(t *testing.T) {
	for _, text := range []string{"", "# nothing yet\n", "users: []\nagents: []\n", "users:\nagents:\n"} {
		c := mustParse(t, text, nil)
		if len(c.Users) != 0 || len(c.Agents) != 0 {
			t.Errorf("%q: %+v", text, c)
		}
	}
}

func TestParseAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	doc := "users: []\nagents:\n  - id: x\n    owner: a\n    skills:\n      - name: s\n        kind: rest\n        base_url: https://api.example.com\n        tools:\n          - name: t\n            request: {path: /x}\n            input_schema:\n              type: object\n              $defs:\n" +
		indent(b.String(), "                ")
	_, err := Parse("mcpgate.yaml", []byte(doc), nil)
	want := "mcpgate.yaml:20: the alias *a4 takes the file beyond 1000000 YAML nodes, counting each alias as a copy of its value; use fewer aliases"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}

// aliasFile returns a small file whose agents, skills and tools are lists
// of n aliases each: n*n*n tools once expanded.
func aliasFile(n int) string {
	aliases := func(name string) string { return strings.Repeat(", *"+name, n-1) }
	return `users: [{name: u}]
agents: [&a {id: a, owner: u, skills: [&s {name: s, kind: rest, base_url: "https://api.example.com", tools: [
  &t {name: t, input_schema: {type: object, properties: {a: {type: string}}, required: [a]}, request: {path: "/x/{a}"}}` + aliases("t") + `
]}` + aliases("s") + `
]}` + aliases("a") + `
]
`
}

func TestParseAliasesOfAliasesFailFast(t *testing.T) {
	doc := aliasFile(300)
	if len(doc) > 4096 {
		t.Fatalf("the file has %d bytes, want a small one", len(doc))
	}
	done := make(chan error, 1)
	go func() {
		_, err := Parse("mcpgate.yaml", []byte(doc), nil)
		done <- err
	}()
	select {
	case err := <-done:
		want := "mcpgate.yaml:4: the alias *s takes the file beyond 1000000 YAML nodes, counting each alias as a copy of its value; use fewer aliases"
		if err == nil || err.Error() != want {
			t.Fatalf("error %v\nwant %s", err, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Parse still runs after 20 s")
	}
}

func TestParseAliasesWithinBudget(t *testing.T) {
	const file = `users: [{name: u}]
agents:
  - id: a
    owner: u
    skills:
      - name: s
        kind: rest
        base_url: https://api.example.com
        tools:
          - {name: t1, input_schema: &schema {type: object, properties: {a: {type: string}}, required: [a]}, request: {path: "/x/{a}", headers: &h {Accept: text/csv}}}
          - {name: t2, input_schema: *schema, request: {path: "/y/{a}", headers: *h}}
`
	tools := mustParse(t, file, nil).Agents[0].Skills[0].Tools
	if len(tools) != 2 || string(tools[1].InputSchema) != string(tools[0].InputSchema) || tools[1].Request.Headers["Accept"] != "text/csv" {
		t.Errorf("tools %+v", tools)
	}
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}

func TestParseWholeArgumentBody(t *testing.T) {
	const file = `users: [{name: alice}]
agents:
  - id: pets
    owner: alice
    skills:
      - name: api
        kind: rest
        base_url: https://pets.example.com
        tools:
          - name: add_pets
            input_schema: {type: object, properties: {pets: {type: array}}, required: [pets]}
            request: {method: POST, path: /pets, body: "{pets}"}
`
	c, err := Parse("mcpgate.yaml", []byte(file), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := c.Agents[0].Skills[0].Tools[0].Request.Body
	if b.Mode != mcpgate.BodyTemplate || string(b.Template) != `"{pets}"` {
		t.Errorf("body = %+v, want the template \"{pets}\"", b)
	}
}
