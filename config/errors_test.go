package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

// head is the start of most bad files: one user and one agent whose skill
// begins on line 9.
const head = `users:
  - name: alice
agents:
  - id: inv
    owner: alice
    mcp_enabled: true
    skills:
      - name: billing
        kind: rest
`

// oneTool is a valid rest skill body (lines 10 to 16) after head. (Its
// schema requires id since a path argument must be required: issue 12.)
const oneTool = `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save
            input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
            request: {method: POST, path: "/items/{id}"}
`

func TestParseErrors(t *testing.T) {
	lookup := env(map[string]string{"TOKEN": "secret-value"})
	for _, c := range []struct {
		name, file, want string
	}{
		{"syntax", "users:\n\t- name: a\n", `mcpgate.yaml:2: found character that cannot start any token`},
		// The message names every top-level field, idempotency_ttl and
		// call_retention (issue 13) included.
		{"not a mapping", "- a\n", `mcpgate.yaml:1: must be a mapping of users, agents, idempotency_ttl, call_retention`},
		{"two documents", "users: []\n---\nagents: []\n", `mcpgate.yaml:2: the file holds more than one YAML document; keep only one`},
		{"unknown top field", "agent:\n  - id: x\n", `mcpgate.yaml:1: unknown field "agent"; did you mean "agents"?`},
		{"unknown field far from any", "users:\n  - name: a\n    colour: red\n",
			`mcpgate.yaml:3: users[0]: unknown field "colour"; known fields: name, password, admin`},
		{"user typo", "users:\n  - name: a\n    pasword: x\n", `mcpgate.yaml:3: users[0]: unknown field "pasword"; did you mean "password"?`},
		{"field twice", "users:\n  - name: a\n    name: b\n", `mcpgate.yaml:3: users[0].name: is set twice (first at line 2)`},
		{"user without name", "users:\n  - admin: true\n", `mcpgate.yaml:2: users[0].name: is required: the user's login name`},
		{"user name", "users:\n  - name: a b\n", `mcpgate.yaml:2: users[0].name: "a b": use 1 to 64 letters, digits, '_', '.', '@' or '-', starting with a letter or digit`},
		{"user twice", "users:\n  - name: a\n  - name: a\n", `mcpgate.yaml:3: users[1].name: user "a" is declared twice (first at line 2)`},
		{"password variable unset", "users:\n  - name: a\n    password: ${env:NOPE}\n", `mcpgate.yaml:3: users[0].password: environment variable NOPE is not set`},
		{"admin not a bool", "users:\n  - name: a\n    admin: yes\n", `mcpgate.yaml:3: users[0].admin: must be true or false, not "yes"`},
		{"users not a list", "users: alice\n", `mcpgate.yaml:1: users: must be a list`},
		{"agent id reserved", "agents:\n  - id: api\n    owner: a\n", `mcpgate.yaml:2: agents[0].id: agent id "api" is reserved for the gateway's own paths`},
		{"agent id pattern", "agents:\n  - id: a/b\n    owner: a\n", `mcpgate.yaml:2: agents[0].id: agent id "a/b": use 1 to 64 letters, digits, '_' or '-', starting with a letter or digit`},
		{"agent without owner", "agents:\n  - id: x\n", `mcpgate.yaml:2: agents[0].owner: is required: the name of the user who owns the agent`},
		{"agent twice", "agents:\n  - id: x\n    owner: a\n  - id: x\n    owner: a\n", `mcpgate.yaml:4: agents[1].id: agent "x" is declared twice (first at line 2)`},
		{"input schema not an object schema", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save
            input_schema: {type: string}
            request: {path: /x}
`, `mcpgate.yaml:14: agents[0].skills[0].tools[0].input_schema: must have "type": "object"`},
		{"input schema missing", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save
            request: {path: /x}
`, `mcpgate.yaml:13: agents[0].skills[0].tools[0].input_schema: is required: a JSON Schema with "type": "object"`},
		{"input schema does not compile", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save
            input_schema:
              type: object
              properties: {n: {type: number, minimum: ten}}
            request: {path: /x}
`, `mcpgate.yaml:14: agents[0].skills[0].tools[0].input_schema: schema does not compile: ` +
			`"mcpgate:///schema.json#" is not valid against metaschema: jsonschema validation failed with 'https://json-schema.org/draft/2020-12/schema#' - ` +
			"at '': 'allOf' failed - at '/properties/n': 'allOf' failed - at '/properties/n/minimum': got string, want number"},
		{"output schema not an object schema", head + oneTool + "            output_schema: {type: array}\n",
			`mcpgate.yaml:16: agents[0].skills[0].tools[0].output_schema: must have "type": "object"`},
		{"schema value without JSON form", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save
            input_schema:
              type: object
              maximum: .inf
            request: {path: /x}
`, `mcpgate.yaml:16: agents[0].skills[0].tools[0].input_schema.maximum: .inf is not a JSON number`},
		{"annotation typo", head + oneTool + "            annotations: {readonlyHint: true}\n",
			`mcpgate.yaml:16: agents[0].skills[0].tools[0].annotations: unknown field "readonlyHint"; did you mean "readOnlyHint"?`},
		{"annotation not a bool", head + oneTool + "            annotations: {readOnlyHint: maybe}\n",
			`mcpgate.yaml:16: agents[0].skills[0].tools[0].annotations.readOnlyHint: must be true or false, not "maybe"`},
		{"tool name", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save it
            input_schema: {type: object}
            request: {path: /x}
`, `mcpgate.yaml:13: agents[0].skills[0].tools[0].name: tool name "save it": use 1 to 64 letters, digits, '_', '.' or '-'`},
		{"tool twice in a skill", head + oneTool + `          - name: save
            input_schema: {type: object}
            request: {path: /x}
`, `mcpgate.yaml:16: agents[0].skills[0].tools[1].name: tool "save" is declared twice in this skill (first at line 13)`},
		{"tool clash across skills", head + oneTool + `      - name: other
        kind: rest
        base_url: http://127.0.0.1:9001
        allow_private: true
        tools:
          - name: list
            input_schema: {type: object}
            request: {path: /list}
          - name: save
            input_schema: {type: object}
            request: {path: /save}
`, `mcpgate.yaml:24: agents[0].skills[1].tools[1].name: tool name "save" is served by both skill "billing" (line 13) and skill "other" of agent "inv"; set a prefix on one of them`},
		{"skill twice", head + oneTool + "      - name: billing\n        kind: rest\n" + strings.TrimPrefix(oneTool, "        base_url: http://127.0.0.1:9000\n") + "        base_url: http://127.0.0.1:9000\n",
			`mcpgate.yaml:16: agents[0].skills[1].name: skill "billing" is declared twice on this agent (first at line 8)`},
		{"argument not in the schema", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save
            input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
            request: {method: POST, path: "/items/{item}", query: {v: "{version}"}, body: [id, rows]}
`, strings.Join([]string{
			`mcpgate.yaml:15: agents[0].skills[0].tools[0].request: uses the argument "item", which is not a property of input_schema (it has id)`,
			`mcpgate.yaml:15: agents[0].skills[0].tools[0].request: uses the argument "version", which is not a property of input_schema (it has id)`,
			`mcpgate.yaml:15: agents[0].skills[0].tools[0].request: uses the argument "rows", which is not a property of input_schema (it has id)`,
		}, "\n")},
		{"skill header argument not in the schema", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        headers: {X-Tenant: "{tenant}"}
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: /x}
`, `mcpgate.yaml:15: agents[0].skills[0].tools[0].input_schema: the skill's header X-Tenant uses the argument "tenant", which is not a property here (it has none)`},
		{"unknown method", head + `        base_url: http://127.0.0.1:9000
        allow_private: true
        tools:
          - name: save
            input_schema: {type: object}
            request: {method: FETCH, path: /x}
`, `mcpgate.yaml:15: agents[0].skills[0].tools[0].request.method: "FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`},
		{"request missing", head + `        base_url: https://api.example.com
        tools:
          - name: save
            input_schema: {type: object}
`, `mcpgate.yaml:12: agents[0].skills[0].tools[0].request: is required: the HTTP request the tool makes (kind rest)`},
		{"no target", head + `        tools:
          - name: save
            input_schema: {type: object}
            request:
              path: /x
`, `mcpgate.yaml:14: agents[0].skills[0].tools[0].request: has no target: set base_url on the skill, or url on every tool's request`},
		{"path and url", head + `        tools:
          - name: save
            input_schema: {type: object}
            request: {path: /x, url: "https://api.example.com/x"}
`, `mcpgate.yaml:13: agents[0].skills[0].tools[0].request.url: set path (under the skill's base_url) or url, not both`},
		{"path with a query", head + `        base_url: https://api.example.com
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: "/x?a=1"}
`, `mcpgate.yaml:14: agents[0].skills[0].tools[0].request.path: "/x?a=1" must not hold a query or fragment; put query parameters under query`},
		{"relative path", head + `        base_url: https://api.example.com
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: x}
`, `mcpgate.yaml:14: agents[0].skills[0].tools[0].request.path: "x" must start with /`},
		{"body mode", head + `        base_url: https://api.example.com
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: /x, body: some}
`, `mcpgate.yaml:14: agents[0].skills[0].tools[0].request.body: "some": use all, none, multipart, "{name}" (one argument as the whole body), a list of argument names or a mapping as a template`},
		{"bad duration", head + `        base_url: https://api.example.com
        timeout: 30
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: /x, timeout: 0s}
`, strings.Join([]string{
			`mcpgate.yaml:11: agents[0].skills[0].timeout: "30" is not a duration such as 30s or 5m`,
			`mcpgate.yaml:15: agents[0].skills[0].tools[0].request.timeout: must be positive, such as 30s; leave it out for the default`,
		}, "\n")},
		{"max response bytes", head + "        max_response_bytes: 1MB\n" + oneTool,
			`mcpgate.yaml:10: agents[0].skills[0].max_response_bytes: must be a positive integer, not "1MB"`},
		{"max response bytes too large", head + "        max_response_bytes: 67108865\n" + oneTool,
			`mcpgate.yaml:10: agents[0].skills[0].max_response_bytes: 67108865 is more than the limit of 67108864 (64 MiB)`},
		{"user information in urls", head + `        base_url: https://bot:hunter2@api.example.com
        tools:
          - name: save
            input_schema: {type: object}
            request: {url: "https://tok123@api.example.com/x"}
`, strings.Join([]string{
			`mcpgate.yaml:10: agents[0].skills[0].base_url: must not hold a user name or password (user:pass@), which would be stored in plain text; send the secret as ${env:NAME} in a header, such as Authorization, or in a query template under the request's query:`,
			`mcpgate.yaml:14: agents[0].skills[0].tools[0].request.url: must not hold a user name or password (user:pass@), which would be stored in plain text; send the secret as ${env:NAME} in a header, such as Authorization, or in a query template under the request's query:`,
		}, "\n")},
		{"secret query parameters in urls", head + `        base_url: https://api.example.com/v1?api_key=abc123&lang=en
        tools:
          - name: save
            input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
            request: {url: "https://api.example.com/x/{id}?Token=abc&access_token=def&page=2"}
`, strings.Join([]string{
			`mcpgate.yaml:10: agents[0].skills[0].base_url: the query parameter "api_key" looks secret and would be stored in plain text; take it out of the URL and write it under the request's query: as ${env:NAME}`,
			`mcpgate.yaml:14: agents[0].skills[0].tools[0].request.url: the query parameter "Token" looks secret and would be stored in plain text; take it out of the URL and write it under the request's query: as ${env:NAME}`,
			`mcpgate.yaml:14: agents[0].skills[0].tools[0].request.url: the query parameter "access_token" looks secret and would be stored in plain text; take it out of the URL and write it under the request's query: as ${env:NAME}`,
		}, "\n")},
		{"alias inside its own value", "users: &u [*u]\n",
			`mcpgate.yaml:1: the alias *u is inside the value it names; write the value out`},
		{"loopback base url", head + `        base_url: http://127.0.0.1:9000
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: /x}
`, `mcpgate.yaml:10: agents[0].skills[0].base_url: blocked by the SSRF guard: address 127.0.0.1 is loopback; set allow_private: true on the skill to allow it`},
		{"metadata url even when private is allowed", head + `        allow_private: true
        tools:
          - name: save
            input_schema: {type: object}
            request: {url: "http://169.254.169.254/latest/meta-data"}
`, `mcpgate.yaml:14: agents[0].skills[0].tools[0].request.url: blocked by the SSRF guard: address 169.254.169.254 is a cloud metadata service`},
		{"scheme", head + `        base_url: ftp://files.example.com
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: /x}
`, `mcpgate.yaml:10: agents[0].skills[0].base_url: blocked by the SSRF guard: scheme "ftp" is not http or https`},
		{"secret reference where it is not expanded", head + `        base_url: https://api.example.com/${env:TOKEN}
        tools:
          - name: save
            input_schema: {type: object}
            request: {path: "/x/${env:TOKEN}", body: {token: "${env:TOKEN}"}}
`, strings.Join([]string{
			`mcpgate.yaml:10: agents[0].skills[0].base_url: ${env:NAME} is expanded only in headers and query values; send secrets there`,
			`mcpgate.yaml:14: agents[0].skills[0].tools[0].request.path: ${env:NAME} is expanded only in headers and query values; send secrets there`,
			`mcpgate.yaml:14: agents[0].skills[0].tools[0].request.body: ${env:NAME} is expanded only in headers and query values; send secrets there`,
		}, "\n")},
		{"query secrets", head + `        base_url: https://api.example.com
        tools:
          - name: save
            input_schema: {type: object, properties: {q: {type: string}}}
            request:
              path: /x
              query: {api_key: abc123, token: "${env:UNSET}", sig: "${env:TOKEN}", q: "{q}", access_token: "{q}"}
`, strings.Join([]string{
			`mcpgate.yaml:16: agents[0].skills[0].tools[0].request.query.api_key: write the secret as ${env:NAME}; it is never stored in plain text`,
			`mcpgate.yaml:16: agents[0].skills[0].tools[0].request.query.token: environment variable UNSET is not set`,
		}, "\n")},
		{"kind missing", strings.TrimSuffix(head, "        kind: rest\n") + oneTool,
			`mcpgate.yaml:8: agents[0].skills[0].kind: is required: rest, mcp or agent`},
		{"kind mcp private url", strings.Replace(head, "kind: rest", "kind: mcp", 1) + "        url: http://127.0.0.1:3001/mcp\n",
			`mcpgate.yaml:10: agents[0].skills[0].url: blocked by the SSRF guard: address 127.0.0.1 is loopback; set allow_private: true on the skill to allow it`},
		{"kind mcp url and command", strings.Replace(head, "kind: rest", "kind: mcp", 1) + "        url: https://mcp.example.com/mcp\n        command: server\n",
			`mcpgate.yaml:11: agents[0].skills[0].command: set either url (Streamable HTTP) or command (stdio), not both`},
		{"kind mcp neither", strings.Replace(head, "kind: rest", "kind: mcp", 1) + "        prefix: s_\n",
			`mcpgate.yaml:8: agents[0].skills[0].url: is required: the upstream's Streamable HTTP URL (or command: to start it over stdio)`},
		{"kind mcp declares tools", strings.Replace(head, "kind: rest", "kind: mcp", 1) + "        command: server\n        tools: []\n",
			`mcpgate.yaml:11: agents[0].skills[0].tools: the tools of an mcp skill are discovered from the upstream server; remove tools:`},
		{"kind mcp with rest fields", strings.Replace(head, "kind: rest", "kind: mcp", 1) + "        command: server\n        base_url: https://x.example.com\n        env: {API_TOKEN: abc}\n",
			strings.Join([]string{
				`mcpgate.yaml:11: agents[0].skills[0].base_url: is a field of kind rest skills; this skill is kind mcp`,
				`mcpgate.yaml:12: agents[0].skills[0].env.API_TOKEN: write the secret as ${env:NAME}; it is never stored in plain text`,
			}, "\n")},
		{"kind rest with mcp fields", head + "        url: https://x.example.com/mcp\n" + oneTool,
			`mcpgate.yaml:10: agents[0].skills[0].url: is a field of kind mcp skills; this skill is kind rest`},
		{"kind agent push without target", strings.Replace(head, "kind: rest", "kind: agent", 1) + "        delivery: push\n",
			strings.Join([]string{
				`mcpgate.yaml:8: agents[0].skills[0].push_url: is required with delivery: push: the https URL envelopes are POSTed to`,
				`mcpgate.yaml:8: agents[0].skills[0].push_secret: is required with delivery: push: ${env:NAME} naming the HMAC key that signs each envelope`,
			}, "\n")},
		{"kind agent push plain", strings.Replace(head, "kind: rest", "kind: agent", 1) + "        delivery: push\n        push_url: http://agents.example.com/in\n        push_secret: hunter2\n",
			strings.Join([]string{
				`mcpgate.yaml:11: agents[0].skills[0].push_url: must be https; plain http is allowed only to loopback or private addresses with allow_private: true`,
				`mcpgate.yaml:12: agents[0].skills[0].push_secret: write the secret as ${env:NAME}; it is never stored in plain text`,
			}, "\n")},
		{"kind agent tool with request", strings.Replace(head, "kind: rest", "kind: agent", 1) + oneTool,
			`mcpgate.yaml:10: agents[0].skills[0].base_url: is a field of kind rest skills; this skill is kind agent` + "\n" +
				`mcpgate.yaml:15: agents[0].skills[0].tools[0].request: only tools of kind rest skills make HTTP requests; kind agent tools are answered by the agent's workers over the message service`},
		{"kind agent pull with push_url", strings.Replace(head, "kind: rest", "kind: agent", 1) + "        push_url: https://a.example.com/in\n",
			`mcpgate.yaml:10: agents[0].skills[0].push_url: is for delivery: push`},
		{"kind unknown", strings.Replace(head, "kind: rest", "kind: grpc", 1) + oneTool,
			`mcpgate.yaml:9: agents[0].skills[0].kind: kind "grpc" is not one of rest, mcp, agent`},
		{"no tools", head + "        base_url: https://api.example.com\n        tools: []\n",
			`mcpgate.yaml:11: agents[0].skills[0].tools: a rest skill needs at least one tool, declared under tools: or imported with openapi:`},
		// auto_approve: false is accepted since the approval gate exists;
		// what is refused is a bad policy around it.
		{"approval policy", head + "        auto_approve: false\n        approvers: [\"\"]\n" + oneTool + "            approval: sometimes\n",
			strings.Join([]string{
				`mcpgate.yaml:11: agents[0].skills[0].approvers[0]: is empty: name a user`,
				`mcpgate.yaml:18: agents[0].skills[0].tools[0].approval: "sometimes" is not required or never`,
			}, "\n")},
		{"approval mode unknown", head + "        auto_approve: false\n        approval: someone\n" + oneTool,
			`mcpgate.yaml:11: agents[0].skills[0].approval: "someone" is not reviewers or caller`},
		{"approval caller without a gated tool", head + "        approval: caller\n" + oneTool,
			`mcpgate.yaml:10: agents[0].skills[0].approval: caller asks the calling user to confirm calls that need approval, and no tool of this skill needs one: set auto_approve: false (or approval: required on a tool)`},
		{"literal secret header", head + "        headers: {Authorization: Bearer abc123, X-Api-Key: abc, Accept: application/json}\n" + oneTool,
			strings.Join([]string{
				`mcpgate.yaml:10: agents[0].skills[0].headers.Authorization: write the secret as ${env:NAME}; it is never stored in plain text`,
				`mcpgate.yaml:10: agents[0].skills[0].headers.X-Api-Key: write the secret as ${env:NAME}; it is never stored in plain text`,
			}, "\n")},
		{"literal secret in a tool header", head + `        base_url: https://api.example.com
        tools:
          - name: save
            input_schema: {type: object, properties: {user: {type: string}}}
            request:
              path: /x
              headers: {X-Auth-Token: abc, X-User-Token: "{user}", X-Trace: abc}
`, `mcpgate.yaml:16: agents[0].skills[0].tools[0].request.headers.X-Auth-Token: write the secret as ${env:NAME}; it is never stored in plain text`},
		{"tool field typo", head + oneTool + "            descripton: x\n",
			`mcpgate.yaml:16: agents[0].skills[0].tools[0]: unknown field "descripton"; did you mean "description"?`},
		{"secret variable unset", head + "        headers:\n          Authorization: Bearer ${env:MISSING_TOKEN}\n" + oneTool,
			`mcpgate.yaml:11: agents[0].skills[0].headers.Authorization: environment variable MISSING_TOKEN is not set`},
		{"malformed secret reference", head + "        headers:\n          Cookie: ${env:bad-name}\n" + oneTool,
			`mcpgate.yaml:11: agents[0].skills[0].headers.Cookie: malformed secret reference in "${env:bad-na…": write ${env:NAME}`},
		{"header name", head + "        headers: {\"X Bad\": v, \"X:Bad\": v, X-Good: v}\n" + oneTool,
			strings.Join([]string{
				`mcpgate.yaml:10: agents[0].skills[0].headers.X Bad: is not a valid header name`,
				`mcpgate.yaml:10: agents[0].skills[0].headers.X:Bad: is not a valid header name`,
			}, "\n")},
		{"header with a line break", head + "        headers:\n          X-Note: \"a\\nb\"\n" + oneTool,
			`mcpgate.yaml:11: agents[0].skills[0].headers.X-Note: must be one line`},
		{"prefix", head + "        prefix: \"a b\"\n" + oneTool,
			`mcpgate.yaml:10: agents[0].skills[0].prefix: "a b" may only hold letters, digits, '_', '.' or '-'`},
		{"skill name", strings.Replace(head, "name: billing", "name: bill ing", 1) + oneTool,
			`mcpgate.yaml:8: agents[0].skills[0].name: skill name "bill ing": use 1 to 64 letters, digits, '_', '.' or '-'`},
		{"merge key", "users:\n  - &u {name: a}\n  - <<: *u\n", strings.Join([]string{
			`mcpgate.yaml:3: users[1]: YAML merge keys (<<) are not supported; write the fields out`,
			`mcpgate.yaml:3: users[1].name: is required: the user's login name`,
		}, "\n")},
		{"path argument not required", head + `        base_url: https://api.example.com
        tools:
          - name: get
            input_schema: {type: object, properties: {n: {type: integer}}}
            request:
              path: /items/{n}
`, `mcpgate.yaml:15: agents[0].skills[0].tools[0].request.path: uses the argument "n", which input_schema does not list under required; a call without it could not be made: add "n" to required`},
		{"prefix too long", head + "        prefix: " + strings.Repeat("p", 60) + "_\n" + oneTool,
			`mcpgate.yaml:14: agents[0].skills[0].tools[0].name: with the skill's prefix, "` + strings.Repeat("p", 60) + `_save" is longer than 64 characters`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("mcpgate.yaml", []byte(c.file), lookup)
			if err == nil {
				t.Fatal("Parse accepted the file")
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if mcpgate.ErrorCode(err) != mcpgate.EINVALID || mcpgate.ErrorMessage(err) != err.Error() {
				t.Errorf("code %q, message %q: want EINVALID with the whole text", mcpgate.ErrorCode(err), mcpgate.ErrorMessage(err))
			}
			var list Errors
			if !errors.As(err, &list) || list[0].File != "mcpgate.yaml" {
				t.Errorf("error %T is not Errors naming the file", err)
			}
		})
	}
}
