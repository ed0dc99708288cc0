package api

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// badSkills are skills the management API refuses, each with the exact
// error body it answers. The bodies were recorded from the API as it was
// when it checked a skill by running it through the config file's reader;
// checking skills in the domain and the backends must keep them.
var badSkills = []struct {
	name, path, body, want string
}{
	{"skill name", "", `{"name":"a b","base_url":"https://api.example.com","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"name: skill name \"a b\": use 1 to 64 letters, digits, '_', '.' or '-'","field":"name"}}`},
	{"no tools", "", `{"name":"x","base_url":"https://api.example.com"}`, `{"error":{"code":"invalid","message":"tools: a rest skill needs at least one tool, declared under tools: or imported with openapi:","field":"tools"}}`},
	{"other kind's field", "", `{"name":"x","kind":"agent","base_url":"https://api.example.com"}`, `{"error":{"code":"invalid","message":"base_url: is a field of kind rest skills; this skill is kind agent","field":"base_url"}}`},
	{"prefix", "", `{"name":"x","prefix":"a b","base_url":"https://api.example.com","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"prefix: \"a b\" may only hold letters, digits, '_', '.' or '-'","field":"prefix"}}`},
	{"response cap", "", `{"name":"x","max_response_bytes":99999999999,"base_url":"https://api.example.com","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"max_response_bytes: 99999999999 is more than the limit of 67108864 (64 MiB)","field":"max_response_bytes"}}`},
	{"header name and line", "", `{"name":"x","headers":{"X Bad":"v","X-Note":"a\nb","Cookie":"c"},"base_url":"https://api.example.com","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"headers.Cookie: write the secret as ${env:NAME}; it is never stored in plain text\nheaders.X Bad: is not a valid header name\nheaders.X-Note: must be one line","field":"headers.Cookie"}}`},
	{"malformed reference", "", `{"name":"x","headers":{"Cookie":"${env:bad-name}"},"base_url":"https://api.example.com","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"headers.Cookie: malformed secret reference in \"${env:bad-na…\": write ${env:NAME}","field":"headers.Cookie"}}`},
	{"url with password", "", `{"name":"x","base_url":"https://u:p@api.example.com/?api_key=1","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"base_url: must not hold a user name or password (user:pass@), which would be stored in plain text; send the secret as ${env:NAME} in a header, such as Authorization, or in a query template under the request's query:\nbase_url: the query parameter \"api_key\" looks secret and would be stored in plain text; take it out of the URL and write it under the request's query: as ${env:NAME}","field":"base_url"}}`},
	{"reference in base_url", "", `{"name":"x","base_url":"https://${env:HOST}/","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"base_url: ${env:NAME} is expanded only in headers and query values; send secrets there","field":"base_url"}}`},
	{"metadata address", "", `{"name":"x","allow_private":true,"base_url":"http://169.254.169.254/","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"base_url: blocked by the SSRF guard: address 169.254.169.254 is a cloud metadata service","field":"base_url"}}`},
	{"tool name", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"a b","input_schema":{"type":"object"},"request":{"path":"/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].name: tool name \"a b\": use 1 to 64 letters, digits, '_', '.' or '-'","field":"tools[0].name"}}`},
	// Changed on purpose: the API used to say "(first at line 1)", the line
	// of the made-up YAML document it checked the skill as.
	{"tool twice", "", `{"name":"x","base_url":"https://api.example.com","tools":[` + echoTool + `,` + echoTool + `]}`, `{"error":{"code":"invalid","message":"tools[1].name: tool \"t\" is declared twice in this skill (first as tools[0])","field":"tools[1].name"}}`},
	{"schema missing", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","request":{"path":"/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].input_schema: is required: a JSON Schema with \"type\": \"object\"","field":"tools[0].input_schema"}}`},
	{"schema does not compile", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object","properties":{"n":{"minimum":"ten"}}},"request":{"path":"/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].input_schema: schema does not compile: \"mcpgate:///schema.json#\" is not valid against metaschema: jsonschema validation failed with 'https://json-schema.org/draft/2020-12/schema#' - at '': 'allOf' failed - at '/properties/n': 'allOf' failed - at '/properties/n/minimum': got string, want number","field":"tools[0].input_schema"}}`},
	{"output schema", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"output_schema":{"type":"object","required":5},"request":{"path":"/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].output_schema: schema does not compile: \"mcpgate:///schema.json#\" is not valid against metaschema: jsonschema validation failed with 'https://json-schema.org/draft/2020-12/schema#' - at '': 'allOf' failed - at '/required': got number, want array","field":"tools[0].output_schema"}}`},
	{"annotation type", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"annotations":{"readOnlyHint":"yes"},"request":{"path":"/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].annotations.readOnlyHint: must be true or false, not \"yes\"","field":"tools[0].annotations.readOnlyHint"}}`},
	{"request missing", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"}}]}`, `{"error":{"code":"invalid","message":"tools[0].request: is required: the HTTP request the tool makes (kind rest)","field":"tools[0].request"}}`},
	{"method", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"method":"FETCH","path":"/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].request.method: \"FETCH\" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS","field":"tools[0].request.method"}}`},
	{"path and url", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"path":"/","url":"https://b.example.com/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].request.url: set path (under the skill's base_url) or url, not both","field":"tools[0].request.url"}}`},
	{"no target", "", `{"name":"x","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"path":"/"}}]}`, `{"error":{"code":"invalid","message":"tools[0].request: has no target: set base_url on the skill, or url on every tool's request","field":"tools[0].request"}}`},
	{"path shape", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"path":"x?y"}}]}`, `{"error":{"code":"invalid","message":"tools[0].request.path: \"x?y\" must start with /","field":"tools[0].request.path"}}`},
	{"literal secret query", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"path":"/","query":{"token":"abc"}}}]}`, `{"error":{"code":"invalid","message":"tools[0].request.query.token: write the secret as ${env:NAME}; it is never stored in plain text","field":"tools[0].request.query.token"}}`},
	{"reference in body", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object"},"request":{"path":"/","body":{"k":"${env:K}"}}}]}`, `{"error":{"code":"invalid","message":"tools[0].request.body: ${env:NAME} is expanded only in headers and query values; send secrets there","field":"tools[0].request.body"}}`},
	{"undeclared argument", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"t","input_schema":{"type":"object","properties":{"a":{}}},"request":{"path":"/{id}"}}]}`, `{"error":{"code":"invalid","message":"tools[0].request: uses the argument \"id\", which is not a property of input_schema (it has a)","field":"tools[0].request"}}`},
	{"header argument", "", `{"name":"x","headers":{"X-User":"{user}"},"base_url":"https://api.example.com","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"tools[0].input_schema: the skill's header X-User uses the argument \"user\", which is not a property here (it has text)","field":"tools[0].input_schema"}}`},
	{"mcp url and command", "", `{"name":"x","kind":"mcp","url":"https://mcp.example.com/mcp","command":"/bin/srv"}`, `{"error":{"code":"invalid","message":"command: set either url (Streamable HTTP) or command (stdio), not both","field":"command"}}`},
	{"mcp stdio fields on url", "", `{"name":"x","kind":"mcp","url":"https://mcp.example.com/mcp","args":["a"],"cwd":"/"}`, `{"error":{"code":"invalid","message":"args: is for stdio upstreams (command)\ncwd: is for stdio upstreams (command)","field":"args"}}`},
	{"mcp headers on command", "", `{"name":"x","kind":"mcp","command":"/bin/srv","headers":{"X-A":"b"},"env":{"A=B":"c"}}`, `{"error":{"code":"invalid","message":"env.A=B: is not a valid environment variable name\nheaders: headers go to Streamable HTTP upstreams (url); pass a stdio upstream its secrets in env","field":"env.A=B"}}`},
	{"agent delivery", "", `{"name":"x","kind":"agent","delivery":"carrier"}`, `{"error":{"code":"invalid","message":"delivery: \"carrier\" is not pull or push","field":"delivery"}}`},
	{"agent push", "", `{"name":"x","kind":"agent","delivery":"push","push_url":"http://a.example.com/in","push_secret":"plain"}`, `{"error":{"code":"invalid","message":"push_url: must be https; plain http is allowed only to loopback or private addresses with allow_private: true\npush_secret: write the secret as ${env:NAME}; it is never stored in plain text","field":"push_url"}}`},
	{"agent push missing", "", `{"name":"x","kind":"agent","delivery":"push"}`, `{"error":{"code":"invalid","message":"push_url: is required with delivery: push: the https URL envelopes are POSTed to\npush_secret: is required with delivery: push: ${env:NAME} naming the HMAC key that signs each envelope","field":"push_url"}}`},
	{"agent headers", "", `{"name":"x","kind":"agent","headers":{"X-A":"b"}}`, `{"error":{"code":"invalid","message":"headers: an agent skill sends no HTTP requests of its own; remove headers:","field":"headers"}}`},
	{"tool on kind agent", "", `{"name":"x","kind":"agent","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"tools[0].request: only tools of kind rest skills make HTTP requests; kind agent tools are answered by the agent's workers over the message service","field":"tools[0].request"}}`},
	{"kind unknown with tools", "", `{"name":"x","kind":"grpc","tools":[` + echoTool + `]}`, `{"error":{"code":"invalid","message":"kind: kind \"grpc\" is not one of rest, mcp, agent","field":"kind"}}`},
	{"clash", "", `{"name":"x","base_url":"https://api.example.com","tools":[{"name":"echo","input_schema":{"type":"object"},"request":{"path":"/"}}]}`, `{"error":{"code":"conflict","message":"tool name \"echo\" is served by both skill \"api\" and skill \"x\" of agent \"shop\"; set a prefix on one of them"}}`},
}

// echoTool is a valid rest tool.
const echoTool = `{"name":"t","input_schema":{"type":"object","properties":{"text":{"type":"string"}}},"request":{"method":"POST","path":"/echo","body":"all"}}`

// TestAPIRefusesBadSkillsAsBefore posts each bad skill as an administrator
// and compares the whole error body.
func TestAPIRefusesBadSkillsAsBefore(t *testing.T) {
	f := mustAPIFixture(t)
	for _, c := range badSkills {
		t.Run(c.name, func(t *testing.T) {
			path := "/api/v1/agents/shop/skills" + c.path
			got := strings.TrimSpace(f.call(t, "POST", path, f.root, c.body).body)
			if got != c.want {
				t.Errorf("body\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// A tool posted alone has its problems named relative to it, not by an
// index into the skill's list the caller never saw (issue 12).
func TestAPIToolProblemsRelativeToThePostedTool(t *testing.T) {
	f := mustAPIFixture(t)
	bad := `{"name":"t2","input_schema":{"type":"object"},"request":{"method":"FETCH","path":"/"}}`
	want := `{"error":{"code":"invalid","message":"request.method: \"FETCH\" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS","field":"request.method"}}`
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/agents/shop/skills/api/tools"},
		{"PUT", "/api/v1/agents/shop/skills/api/tools/t2"},
		{"PUT", "/api/v1/agents/shop/skills/api/tools/echo"},
	} {
		body := bad
		if strings.HasSuffix(c.path, "/echo") {
			body = strings.Replace(bad, `"t2"`, `"echo"`, 1)
		}
		if got := strings.TrimSpace(f.call(t, c.method, c.path, f.alice, body).body); got != want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.method, c.path, got, want)
		}
	}
}

// A path argument the input schema does not require is refused when the
// tool is written, naming the field: every call without it would fail
// (issue 12).
func TestAPIPathArgumentMustBeRequired(t *testing.T) {
	f := mustAPIFixture(t)
	tool := `{"name":"get","input_schema":{"type":"object","properties":{"n":{"type":"integer"}}},"request":{"path":"/items/{n}"}}`
	want := `{"error":{"code":"invalid","message":"request.path: uses the argument \"n\", which input_schema does not list under required; a call without it could not be made: add \"n\" to required","field":"request.path"}}`
	if got := strings.TrimSpace(f.call(t, "POST", "/api/v1/agents/shop/skills/api/tools", f.alice, tool).body); got != want {
		t.Errorf("tool POST:\n got %s\nwant %s", got, want)
	}
	skill := `{"name":"x","base_url":"https://api.example.com","tools":[` + tool + `]}`
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.alice, skill).wantError(t, 400, "invalid", "tools[0].request.path", `add "n" to required`)
	fixed := strings.Replace(tool, `}}},`, `}},"required":["n"]},`, 1)
	f.call(t, "POST", "/api/v1/agents/shop/skills/api/tools", f.alice, fixed).want(t, 201)
}

// A skill whose ${env:NAME} names an unset variable is accepted with a
// warning in the answer and the log, and shows it until the variable is
// set (issue 12).
func TestAPIWarnsOfUnsetVariables(t *testing.T) {
	const name = "MCPGATE_TEST_UNSET_NC_TOKEN"
	var logs bytes.Buffer
	f := mustAPIFixture(t)
	f.srv.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	skill := `{"name":"nc","base_url":"https://api.example.com","headers":{"Authorization":"Bearer ${env:` + name + `}"},"tools":[` + echoTool + `]}`
	want := []warning{{Field: "headers.Authorization", Message: "environment variable " + name + " is not set; the skill's calls fail until it is set"}}
	var got skillView
	f.call(t, "POST", "/api/v1/agents/shop/skills", f.root, skill).want(t, 201).decode(t, &got)
	if diff := cmp.Diff(want, got.Warnings); diff != "" {
		t.Errorf("warnings of the POST (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "field=headers.Authorization") {
		t.Errorf("log = %q, want a line naming the field", logs.String())
	}
	got = skillView{}
	f.call(t, "GET", "/api/v1/agents/shop/skills/nc", f.root, "").want(t, 200).decode(t, &got)
	if diff := cmp.Diff(want, got.Warnings); diff != "" {
		t.Errorf("warnings of the GET (-want +got):\n%s", diff)
	}
	tool := `{"name":"t2","input_schema":{"type":"object"},"request":{"path":"/","query":{"key":"${env:` + name + `_Q}"}}}`
	var tv struct{ Warnings []warning }
	f.call(t, "POST", "/api/v1/agents/shop/skills/nc/tools", f.root, tool).want(t, 201).decode(t, &tv)
	if len(tv.Warnings) != 2 || tv.Warnings[1].Field != "tools[1].request.query.key" {
		t.Errorf("warnings of the tool POST = %+v, want the skill's two", tv.Warnings)
	}
	t.Setenv(name, "set")
	t.Setenv(name+"_Q", "set")
	if body := f.call(t, "GET", "/api/v1/agents/shop/skills/nc", f.root, "").want(t, 200).body; strings.Contains(body, "warnings") {
		t.Errorf("GET after the variables were set = %s, want no warnings", body)
	}
}
