package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAPIAgents(t *testing.T) {
	f := mustAPIFixture(t)
	f.call(t, "POST", "/api/v1/agents", f.alice, `{"id":"inv","name":"Invoices","description":"Bills.","mcp_enabled":true}`).want(t, http.StatusCreated)

	var list struct {
		Agents []struct {
			ID, Owner  string
			MCPEnabled bool `json:"mcp_enabled"`
		} `json:"agents"`
	}
	f.call(t, "GET", "/api/v1/agents", f.alice, "").want(t, http.StatusOK).decode(t, &list)
	got := []string{}
	for _, a := range list.Agents {
		got = append(got, a.ID+"/"+a.Owner)
		if !a.MCPEnabled {
			t.Errorf("agent %s: mcp_enabled false", a.ID)
		}
	}
	if diff := cmp.Diff([]string{"inv/alice", "shop/alice"}, got); diff != "" {
		t.Errorf("alice's agents (-want +got):\n%s", diff)
	}

	var agent struct {
		Name       string
		MCPEnabled bool `json:"mcp_enabled"`
		Source     string
	}
	f.call(t, "PATCH", "/api/v1/agents/inv", f.alice, `{"name":"Bills","mcp_enabled":false}`).want(t, http.StatusOK)
	f.call(t, "GET", "/api/v1/agents/inv", f.alice, "").want(t, http.StatusOK).decode(t, &agent)
	if agent.Name != "Bills" || agent.MCPEnabled || agent.Source != "api" {
		t.Errorf("after PATCH: %+v, want name Bills, MCP off, source api", agent)
	}
	if tbl, _ := f.registry.Table("inv"); tbl == nil || tbl.Agent.MCPEnabled {
		t.Errorf("the registry did not reload after PATCH")
	}

	f.call(t, "GET", "/api/v1/agents/inv", f.bob, "").wantError(t, http.StatusNotFound, "not_found", "", `"inv" not found`)
	f.call(t, "PATCH", "/api/v1/agents/inv", f.bob, `{"name":"x"}`).wantError(t, http.StatusNotFound, "not_found", "", "")
	f.call(t, "PATCH", "/api/v1/agents/inv", f.alice, `{"owner":"bob"}`).wantError(t, http.StatusForbidden, "forbidden", "owner", "admin")
	f.call(t, "POST", "/api/v1/agents", f.alice, `{"id":"x","owner":"bob"}`).wantError(t, http.StatusForbidden, "forbidden", "owner", "admin")
	f.call(t, "POST", "/api/v1/agents", f.alice, `{"id":"inv"}`).wantError(t, http.StatusConflict, "conflict", "", "exists")
	f.call(t, "POST", "/api/v1/agents", f.alice, `{"id":"api"}`).wantError(t, http.StatusBadRequest, "invalid", "id", "reserved")
	f.call(t, "DELETE", "/api/v1/agents/inv", f.bob, "").wantError(t, http.StatusNotFound, "not_found", "", "")
	f.call(t, "DELETE", "/api/v1/agents/inv", f.alice, "").want(t, http.StatusNoContent)
	f.call(t, "GET", "/api/v1/agents/inv", f.alice, "").wantError(t, http.StatusNotFound, "not_found", "", "")
}

func TestAPIAdminActsOnEverything(t *testing.T) {
	f := mustAPIFixture(t)
	var list struct{ Agents []struct{ ID string } }
	f.call(t, "GET", "/api/v1/agents", f.root, "").want(t, http.StatusOK).decode(t, &list)
	if len(list.Agents) != 2 {
		t.Errorf("admin sees %d agents, want 2", len(list.Agents))
	}
	f.call(t, "GET", "/api/v1/agents?owner=bob", f.root, "").want(t, http.StatusOK).decode(t, &list)
	if len(list.Agents) != 1 || list.Agents[0].ID != "bobs" {
		t.Errorf("?owner=bob: %+v", list.Agents)
	}
	f.call(t, "GET", "/api/v1/agents?owner=bob", f.alice, "").wantError(t, http.StatusForbidden, "forbidden", "", "admin")
	f.call(t, "GET", "/api/v1/agents?owner=nobody", f.root, "").wantError(t, http.StatusBadRequest, "invalid", "owner", "nobody")
	f.call(t, "POST", "/api/v1/agents", f.root, `{"id":"given","owner":"bob"}`).want(t, http.StatusCreated)
	f.call(t, "GET", "/api/v1/agents/given", f.bob, "").want(t, http.StatusOK)
	f.call(t, "PATCH", "/api/v1/agents/given", f.root, `{"owner":"alice"}`).want(t, http.StatusOK)
	f.call(t, "GET", "/api/v1/agents/given", f.bob, "").want(t, http.StatusNotFound)
	f.call(t, "PUT", "/api/v1/agents/bobs/skills/more", f.root, skillJSON("more", "extra")).want(t, http.StatusCreated)
}

func TestAPISkillsAndTools(t *testing.T) {
	f := mustAPIFixture(t)
	before := f.changes.Load()
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, skillJSON("billing", "get_invoice", "list_invoices")).want(t, http.StatusCreated)
	if diff := cmp.Diff([]string{"echo", "get_invoice", "list_invoices"}, f.toolNames(t, "shop")); diff != "" {
		t.Errorf("tools after POST skill (-want +got):\n%s", diff)
	}
	var sk struct {
		Name, Source string
		AutoApprove  bool `json:"auto_approve"`
		Tools        []struct{ Name string }
	}
	f.call(t, "GET", "/api/v1/agents/shop/skills/billing", f.alice, "").want(t, http.StatusOK).decode(t, &sk)
	if sk.Source != "api" || !sk.AutoApprove || len(sk.Tools) != 2 {
		t.Errorf("skill = %+v, want source api, auto_approve, 2 tools", sk)
	}
	var skills struct{ Skills []struct{ Name string } }
	f.call(t, "GET", "/api/v1/agents/shop/skills", f.alice, "").want(t, http.StatusOK).decode(t, &skills)
	if len(skills.Skills) != 2 {
		t.Errorf("skills = %+v, want api and billing", skills)
	}
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, skillJSON("billing", "x")).wantError(t, http.StatusConflict, "conflict", "name", "already")
	f.call(t, "PUT", "/api/v1/agents/shop/skills/billing", f.alice, skillJSON("billing", "get_invoice")).want(t, http.StatusOK)
	f.call(t, "PUT", "/api/v1/agents/shop/skills/billing", f.alice, skillJSON("other", "x")).wantError(t, http.StatusBadRequest, "invalid", "name", "differs")

	tools := "/api/v1/agents/shop/skills/billing/tools"
	f.call(t, "POST", tools, f.alice, toolJSON("pay")).want(t, http.StatusCreated)
	f.call(t, "POST", tools, f.alice, toolJSON("pay")).wantError(t, http.StatusConflict, "conflict", "name", `"pay" already`)
	f.call(t, "PUT", tools+"/refund", f.alice, toolJSON("refund")).want(t, http.StatusCreated)
	f.call(t, "PUT", tools+"/refund", f.alice, `{"description":"Refund.","input_schema":{"type":"object"},"request":{"method":"POST","path":"/refund"}}`).want(t, http.StatusOK)
	var tool struct{ Name, Description string }
	f.call(t, "GET", tools+"/refund", f.alice, "").want(t, http.StatusOK).decode(t, &tool)
	if tool.Name != "refund" || tool.Description != "Refund." {
		t.Errorf("tool = %+v", tool)
	}
	var tl struct{ Tools []struct{ Name string } }
	f.call(t, "GET", tools, f.alice, "").want(t, http.StatusOK).decode(t, &tl)
	if len(tl.Tools) != 3 {
		t.Errorf("tools = %+v, want get_invoice, pay, refund", tl)
	}
	if diff := cmp.Diff([]string{"echo", "get_invoice", "pay", "refund"}, f.toolNames(t, "shop")); diff != "" {
		t.Errorf("served tools (-want +got):\n%s", diff)
	}
	f.call(t, "GET", tools+"/nope", f.alice, "").wantError(t, http.StatusNotFound, "not_found", "", "nope")
	f.call(t, "DELETE", tools+"/pay", f.alice, "").want(t, http.StatusNoContent)
	f.call(t, "DELETE", tools+"/refund", f.alice, "").want(t, http.StatusNoContent)
	f.call(t, "DELETE", tools+"/get_invoice", f.alice, "").wantError(t, http.StatusBadRequest, "invalid", "tools", "last tool")
	f.call(t, "DELETE", "/api/v1/agents/shop/skills/billing", f.alice, "").want(t, http.StatusNoContent)
	f.call(t, "DELETE", "/api/v1/agents/shop/skills/billing", f.alice, "").wantError(t, http.StatusNotFound, "not_found", "", "billing")
	f.call(t, "POST", "/api/v1/agents/shop/skills/billing/tools", f.alice, toolJSON("x")).wantError(t, http.StatusNotFound, "not_found", "", "billing")
	if diff := cmp.Diff([]string{"echo"}, f.toolNames(t, "shop")); diff != "" {
		t.Errorf("served tools after the deletes (-want +got):\n%s", diff)
	}
	// Every write above that succeeded reloaded the registry.
	if n := f.changes.Load() - before; n != 8 {
		t.Errorf("Changed called %d times, want 8", n)
	}
	f.call(t, "GET", "/api/v1/agents/bobs/skills", f.alice, "").wantError(t, http.StatusNotFound, "not_found", "", "bobs")
	f.call(t, "PUT", "/api/v1/agents/bobs/skills/x", f.alice, skillJSON("x", "y")).wantError(t, http.StatusNotFound, "not_found", "", "bobs")
}

func TestAPIToolNameClash(t *testing.T) {
	f := mustAPIFixture(t)
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, skillJSON("second", "echo")).
		wantError(t, http.StatusConflict, "conflict", "", `tool name "echo" is served by both skill "api" and skill "second"`)
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, `{"name":"second","prefix":"s_","base_url":"https://api.example.com","tools":[`+toolJSON("echo")+`]}`).
		want(t, http.StatusCreated)
	f.call(t, "PUT", "/api/v1/agents/shop/skills/second/tools/x", f.alice, toolJSON("x")).want(t, http.StatusCreated)
	f.call(t, "PUT", "/api/v1/agents/shop/skills/api/tools/s_x", f.alice, toolJSON("s_x")).
		wantError(t, http.StatusConflict, "conflict", "", `"s_x" is served by both`)
}

func TestAPIValidation(t *testing.T) {
	f := mustAPIFixture(t)
	skills := "/api/v1/agents/shop/skills"
	tests := []struct {
		name, path, body string
		status           int
		code, field, msg string
	}{
		{"unknown field", skills, `{"name":"x","colour":"red"}`, 400, "invalid", "colour", "unknown field"},
		{"wrong type", skills, `{"name":"x","allow_private":"yes"}`, 400, "invalid", "allow_private", "true or false"},
		{"not JSON", skills, `{"name":`, 400, "invalid", "", "ends in the middle"},
		{"two values", skills, `{} {}`, 400, "invalid", "", "nothing after it"},
		{"kind mcp with tools", skills, `{"name":"x","kind":"mcp","url":"https://mcp.example.com/mcp","tools":[` + toolJSON("t") + `]}`, 400, "invalid", "tools", "discovered from the upstream"},
		{"kind mcp without upstream", skills, `{"name":"x","kind":"mcp"}`, 400, "invalid", "url", "is required"},
		{"kind agent with request", skills, `{"name":"x","kind":"agent","tools":[` + toolJSON("t") + `]}`, 400, "invalid", "tools[0].request", "only tools of kind rest"},
		{"kind unknown", skills, `{"name":"x","kind":"grpc"}`, 400, "invalid", "kind", "not one of rest, mcp, agent"},
		// auto_approve: false is accepted since the approval gate exists; a
		// tool's approval must be required or never.
		{"approval", skills, `{"name":"x","auto_approve":false,"approvers":["bob"],"base_url":"https://api.example.com","tools":[{"name":"t","approval":"maybe","input_schema":{"type":"object"},"request":{"path":"/"}}]}`, 400, "invalid", "tools[0].approval", "not required or never"},
		{"literal secret", skills, `{"name":"x","base_url":"https://api.example.com","headers":{"Authorization":"Bearer abc"},"tools":[` + toolJSON("t") + `]}`, 400, "invalid", "headers.Authorization", "${env:NAME}"},
		{"private without allow_private", skills, `{"name":"x","base_url":"http://127.0.0.1:9","tools":[` + toolJSON("t") + `]}`, 400, "invalid", "base_url", "allow_private"},
		{"no tools", skills, `{"name":"x","base_url":"https://api.example.com"}`, 400, "invalid", "tools", "at least one tool"},
		{"bad schema", skills, `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"string"},"request":{"path":"/"}}]}`, 400, "invalid", "tools[0].input_schema", `"type": "object"`},
		{"undeclared argument", skills, `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"path":"/{id}"}}]}`, 400, "invalid", "tools[0].request", `"id"`},
		{"bad skill name", skills, `{"name":"a b","base_url":"https://api.example.com","tools":[` + toolJSON("t") + `]}`, 400, "invalid", "name", "skill name"},
		{"bad duration", skills, `{"name":"x","timeout":5}`, 400, "invalid", "timeout", "duration"},
		{"bad body form", skills + "/api/tools", `{"name":"t","input_schema":{"type":"object"},"request":{"path":"/","body":"some"}}`, 400, "invalid", "", "body"},
		{"too large", skills, `{"name":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "too_large", "", "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.call(t, "POST", tt.path, f.alice, tt.body).wantError(t, tt.status, tt.code, tt.field, tt.msg)
		})
	}
	t.Run("no content type", func(t *testing.T) {
		req, _ := http.NewRequest("POST", f.http.URL+skills, strings.NewReader(skillJSON("x", "t")))
		req.Header.Set("Authorization", "Bearer "+f.alice)
		req.Header.Set("Content-Type", "text/plain")
		doRequest(t, req).wantError(t, http.StatusBadRequest, "invalid", "", "application/json")
	})
}

func TestAPIAgentKeyReadsOnly(t *testing.T) {
	f := mustAPIFixture(t)
	k := f.shopKey
	var list struct{ Agents []struct{ ID string } }
	f.call(t, "GET", "/api/v1/agents", k, "").want(t, http.StatusOK).decode(t, &list)
	if len(list.Agents) != 1 || list.Agents[0].ID != "shop" {
		t.Errorf("agent key lists %+v, want its agent only", list.Agents)
	}
	f.call(t, "GET", "/api/v1/agents/shop", k, "").want(t, http.StatusOK)
	f.call(t, "GET", "/api/v1/agents/shop/skills", k, "").want(t, http.StatusOK)
	f.call(t, "GET", "/api/v1/agents/shop/skills/api/tools/echo", k, "").want(t, http.StatusOK)
	f.call(t, "GET", "/api/v1/agents/bobs", k, "").wantError(t, http.StatusNotFound, "not_found", "", "")
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/api/v1/agents", `{"id":"x"}`},
		{"PATCH", "/api/v1/agents/shop", `{"name":"x"}`},
		{"DELETE", "/api/v1/agents/shop", ""},
		{"POST", "/api/v1/agents/shop/skills", skillJSON("x", "y")},
		{"PUT", "/api/v1/agents/shop/skills/api/tools/echo", toolJSON("echo")},
		{"DELETE", "/api/v1/agents/shop/skills/api", ""},
		{"GET", "/api/v1/keys", ""},
		{"POST", "/api/v1/keys", `{"kind":"agent","agent_id":"shop"}`},
		{"GET", "/api/v1/users", ""},
	} {
		f.call(t, w.method, w.path, k, w.body).wantError(t, http.StatusForbidden, "forbidden", "", "")
	}
}

func TestAPIAuthentication(t *testing.T) {
	f := mustAPIFixture(t)
	r := f.call(t, "GET", "/api/v1/agents", "", "")
	r.wantError(t, http.StatusUnauthorized, "unauthorized", "", "authentication required")
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	f.call(t, "GET", "/api/v1/agents", "oag_"+strings.Repeat("A", 43), "").wantError(t, http.StatusUnauthorized, "unauthorized", "", "unknown API key")
	f.call(t, "GET", "/api/v1/openapi.json", "", "").want(t, http.StatusOK)
}

func TestAPIUnknownRoutes(t *testing.T) {
	f := mustAPIFixture(t)
	f.call(t, "GET", "/api/v1/nothing", f.alice, "").wantError(t, http.StatusNotFound, "not_found", "", "no management API route")
	r := f.call(t, "PUT", "/api/v1/agents", f.alice, `{}`)
	r.wantError(t, http.StatusMethodNotAllowed, "invalid", "", "use GET, POST")
	if got := r.header.Get("Allow"); got != "GET, POST" {
		t.Errorf("Allow = %q, want GET, POST", got)
	}
}

func TestAPIKeys(t *testing.T) {
	f := mustAPIFixture(t)
	var created struct {
		ID, Kind, Key, Hint, Source string
		AgentID                     string `json:"agent_id"`
	}
	f.call(t, "POST", "/api/v1/keys", f.alice, `{"kind":"agent","agent_id":"shop","name":"ci"}`).want(t, http.StatusCreated).decode(t, &created)
	if !strings.HasPrefix(created.Key, "bak_") || created.AgentID != "shop" || created.Source != "api" || !strings.HasPrefix(created.Key, strings.TrimSuffix(created.Hint, "…")) {
		t.Errorf("created key = %+v", created)
	}
	f.call(t, "GET", "/api/v1/agents/shop", created.Key, "").want(t, http.StatusOK)

	f.call(t, "POST", "/api/v1/keys", f.alice, `{"kind":"agent","agent_id":"bobs"}`).wantError(t, http.StatusNotFound, "not_found", "", "bobs")
	f.call(t, "POST", "/api/v1/keys", f.alice, `{"kind":"robot"}`).wantError(t, http.StatusBadRequest, "invalid", "kind", "robot")
	f.call(t, "POST", "/api/v1/keys", f.alice, `{"kind":"user","user":"bob"}`).wantError(t, http.StatusForbidden, "forbidden", "user", "admin")
	var userKey struct{ ID, Key string }
	f.call(t, "POST", "/api/v1/keys", f.alice, `{"kind":"user","name":"laptop"}`).want(t, http.StatusCreated).decode(t, &userKey)
	if !strings.HasPrefix(userKey.Key, "oag_") {
		t.Errorf("user key = %+v", userKey)
	}

	var keys struct {
		Keys []map[string]any `json:"keys"`
	}
	f.call(t, "GET", "/api/v1/keys", f.alice, "").want(t, http.StatusOK).decode(t, &keys)
	if len(keys.Keys) != 4 { // fixture user key and agent key, and the two made here
		t.Errorf("alice lists %d keys, want 4", len(keys.Keys))
	}
	for _, k := range keys.Keys {
		if _, leaked := k["key"]; leaked || k["hash"] != nil {
			t.Errorf("listed key shows its secret or hash: %v", k)
		}
	}
	f.call(t, "GET", "/api/v1/keys?agent=shop", f.alice, "").want(t, http.StatusOK).decode(t, &keys)
	if len(keys.Keys) != 2 {
		t.Errorf("?agent=shop lists %d keys, want 2", len(keys.Keys))
	}
	f.call(t, "GET", "/api/v1/keys?agent=bobs", f.alice, "").want(t, http.StatusNotFound)
	f.call(t, "GET", "/api/v1/keys?user=bob", f.alice, "").want(t, http.StatusForbidden)
	f.call(t, "GET", "/api/v1/keys?user=bob", f.root, "").want(t, http.StatusOK).decode(t, &keys)
	if len(keys.Keys) != 1 {
		t.Errorf("admin ?user=bob lists %d keys, want 1", len(keys.Keys))
	}

	f.call(t, "DELETE", "/api/v1/keys/"+created.ID, f.bob, "").wantError(t, http.StatusNotFound, "not_found", "", "")
	f.call(t, "DELETE", "/api/v1/keys/"+created.ID, f.alice, "").want(t, http.StatusNoContent)
	// Forget makes the revocation immediate, despite the key cache.
	f.call(t, "GET", "/api/v1/agents/shop", created.Key, "").wantError(t, http.StatusUnauthorized, "unauthorized", "", "revoked")
	f.call(t, "DELETE", "/api/v1/keys/key_nope", f.alice, "").want(t, http.StatusNotFound)
}

func TestAPIUsers(t *testing.T) {
	f := mustAPIFixture(t)
	f.call(t, "GET", "/api/v1/users", f.alice, "").wantError(t, http.StatusForbidden, "forbidden", "", "admin")
	f.call(t, "POST", "/api/v1/users", f.alice, `{"name":"eve"}`).want(t, http.StatusForbidden)

	var u struct {
		ID, Name     string
		Admin        bool
		HasPassword  bool   `json:"has_password"`
		PasswordHash string `json:"password_hash"`
	}
	r := f.call(t, "POST", "/api/v1/users", f.root, `{"name":"carol","password":"correct horse"}`).want(t, http.StatusCreated)
	r.decode(t, &u)
	if !u.HasPassword || u.PasswordHash != "" || strings.Contains(r.body, "argon2") {
		t.Errorf("created user = %s", r.body)
	}
	f.call(t, "POST", "/api/v1/users", f.root, `{"name":"carol"}`).wantError(t, http.StatusConflict, "conflict", "name", "taken")
	f.call(t, "POST", "/api/v1/users", f.root, `{"name":"dave","password":"short"}`).wantError(t, http.StatusBadRequest, "invalid", "password", "8 characters")
	f.call(t, "POST", "/api/v1/users", f.root, `{"name":"no spaces"}`).wantError(t, http.StatusBadRequest, "invalid", "name", "letters")
	f.call(t, "PATCH", "/api/v1/users/"+u.ID, f.root, `{"admin":true,"password":""}`).want(t, http.StatusOK).decode(t, &u)
	if !u.Admin || u.HasPassword {
		t.Errorf("after PATCH: %+v, want admin without password", u)
	}
	var list struct{ Users []struct{ Name string } }
	f.call(t, "GET", "/api/v1/users", f.root, "").want(t, http.StatusOK).decode(t, &list)
	if len(list.Users) != 4 {
		t.Errorf("users = %+v", list.Users)
	}
	f.call(t, "GET", "/api/v1/users/"+u.ID, f.root, "").want(t, http.StatusOK)

	var root struct{ ID string }
	f.call(t, "POST", "/api/v1/keys", f.root, `{"kind":"user"}`).want(t, http.StatusCreated).decode(t, &root)
	rootUser := f.call(t, "GET", "/api/v1/keys?user=root", f.root, "")
	var rk struct {
		Keys []struct {
			UserID string `json:"user_id"`
		}
	}
	rootUser.decode(t, &rk)
	f.call(t, "PATCH", "/api/v1/users/"+rk.Keys[0].UserID, f.root, `{"admin":false}`).wantError(t, http.StatusBadRequest, "invalid", "admin", "your own admin rights")
	f.call(t, "DELETE", "/api/v1/users/"+rk.Keys[0].UserID, f.root, "").wantError(t, http.StatusBadRequest, "invalid", "", "yourself")

	var bob struct {
		Agents []struct {
			OwnerID string `json:"owner_id"`
		}
	}
	f.call(t, "GET", "/api/v1/agents?owner=bob", f.root, "").decode(t, &bob)
	f.call(t, "DELETE", "/api/v1/users/"+bob.Agents[0].OwnerID, f.root, "").wantError(t, http.StatusConflict, "conflict", "", "owns")
	f.call(t, "DELETE", "/api/v1/users/"+u.ID, f.root, "").want(t, http.StatusNoContent)
	f.call(t, "GET", "/api/v1/users/"+u.ID, f.root, "").want(t, http.StatusNotFound)
}

func TestAPIWholeArgumentBody(t *testing.T) {
	f := mustAPIFixture(t)
	skill := `{"name":"bulk","base_url":"https://api.example.com","tools":[{"name":"put_rows",
		"input_schema":{"type":"object","properties":{"rows":{"type":"array"}}},"request":{"method":"POST","path":"/rows","body":"{rows}"}}]}`
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, skill).want(t, http.StatusCreated)
	var tool struct {
		Request struct{ Body string }
	}
	f.call(t, "GET", "/api/v1/agents/shop/skills/bulk/tools/put_rows", f.alice, "").want(t, http.StatusOK).decode(t, &tool)
	if tool.Request.Body != "{rows}" {
		t.Errorf("stored body = %q, want {rows}", tool.Request.Body)
	}
	undeclared := strings.Replace(skill, `"body":"{rows}"`, `"body":"{lines}"`, 1)
	f.call(t, "PUT", "/api/v1/agents/shop/skills/bulk", f.alice, undeclared).wantError(t, http.StatusBadRequest, "invalid", "tools[0].request", `"lines"`)
}
