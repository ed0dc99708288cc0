package openapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSecurity covers how each kind of security scheme maps to skill
// headers, tool queries and secrets.
func TestSecurity(t *testing.T) {
	schemes := `  securitySchemes:
    headerKey: {type: apiKey, in: header, name: X-API-Key}
    queryKey: {type: apiKey, in: query, name: key}
    cookieKey: {type: apiKey, in: cookie, name: sid}
    bearer: {type: http, scheme: bearer, bearerFormat: JWT}
    basic: {type: http, scheme: basic}
    oauth: {type: oauth2, flows: {}}
    oidc: {type: openIdConnect, openIdConnectUrl: 'https://id.example.com'}
    digest: {type: http, scheme: digest}
    mtls: {type: mutualTLS}
    shared: {$ref: '#/components/securitySchemes/bearer'}
`
	tests := []struct {
		name, global, opSecurity string
		wantHeaders              map[string]string
		wantQuery                map[string]string
		wantSecrets              []string
		wantSkipped              []string
	}{
		{name: "header key", global: "[{headerKey: []}]",
			wantHeaders: map[string]string{"X-API-Key": "${env:MY_API_HEADERKEY}"}, wantSecrets: []string{"MY_API_HEADERKEY"}},
		{name: "query key", global: "[{queryKey: []}]",
			wantQuery: map[string]string{"key": "${env:MY_API_QUERYKEY}"}, wantSecrets: []string{"MY_API_QUERYKEY"}},
		{name: "bearer", global: "[{bearer: []}]",
			wantHeaders: map[string]string{"Authorization": "Bearer ${env:MY_API_BEARER}"}, wantSecrets: []string{"MY_API_BEARER"}},
		{name: "basic", global: "[{basic: []}]",
			wantHeaders: map[string]string{"Authorization": "Basic ${env:MY_API_BASIC}"}, wantSecrets: []string{"MY_API_BASIC"}},
		{name: "oauth2", global: "[{oauth: [read]}]",
			wantHeaders: map[string]string{"Authorization": "Bearer ${env:MY_API_OAUTH}"}, wantSecrets: []string{"MY_API_OAUTH"}},
		{name: "openIdConnect by reference", global: "[{oidc: []}, {shared: []}]",
			wantHeaders: map[string]string{"Authorization": "Bearer ${env:MY_API_OIDC}"}, wantSecrets: []string{"MY_API_OIDC"},
			wantSkipped: []string{`security scheme "shared": header Authorization is already set by another scheme`}},
		{name: "from operations when none is global", opSecurity: "[{headerKey: []}]",
			wantHeaders: map[string]string{"X-API-Key": "${env:MY_API_HEADERKEY}"}, wantSecrets: []string{"MY_API_HEADERKEY"}},
		{name: "unsupported", global: "[{cookieKey: []}, {digest: []}, {mtls: []}, {missing: []}]",
			wantSkipped: []string{
				`security scheme "cookieKey": an API key in a cookie is not supported; set a Cookie header on the skill instead`,
				`security scheme "digest": type "http" (in "", scheme "digest") is not supported`,
				`security scheme "missing": it is not defined in components.securitySchemes`,
				`security scheme "mtls": type "mutualTLS" (in "", scheme "") is not supported`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := "{operationId: op, responses: {'200': {description: ok}}}"
			if tt.opSecurity != "" {
				op = "{operationId: op, security: " + tt.opSecurity + ", responses: {'200': {description: ok}}}"
			}
			doc := doc30("  /x:\n    get: "+op+"\n", schemes)
			if tt.global != "" {
				doc += "security: " + tt.global + "\n"
			}
			res := mustImport(t, doc, &Options{Skill: "my-api"})
			if diff := cmp.Diff(tt.wantHeaders, res.Headers); diff != "" {
				t.Errorf("Headers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantQuery, mustTool(t, res, "op").Request.Query); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSecrets, res.Secrets); diff != "" {
				t.Errorf("Secrets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSkipped, res.Skipped); diff != "" {
				t.Errorf("Skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSecurityReplacesParameters checks that a parameter the credentials
// supply is not also an argument.
func TestSecurityReplacesParameters(t *testing.T) {
	doc := doc30(`  /x:
    get:
      operationId: op
      parameters:
        - {name: api_key, in: header, schema: {type: string}}
        - {name: key, in: query, schema: {type: string}}
        - {name: other, in: query, schema: {type: string}}
      responses: {'200': {description: ok}}
`, `  securitySchemes:
    h: {type: apiKey, in: header, name: API_KEY}
    q: {type: apiKey, in: query, name: key}
`) + "security: [{h: [], q: []}]\n"
	tool := mustTool(t, mustImport(t, doc, &Options{Skill: "s"}), "op")
	want := map[string]string{"key": "${env:S_Q}", "other": "{other}"}
	if diff := cmp.Diff(want, tool.Request.Query); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if tool.Request.Headers != nil {
		t.Errorf("headers = %v, want none", tool.Request.Headers)
	}
}

// TestEnvName covers the secret variable names.
func TestEnvName(t *testing.T) {
	tests := []struct {
		skill, scheme string
		taken         []string
		want          string
	}{
		{"petstore", "api_key", nil, "PETSTORE_API_KEY"},
		{"my-api.v2", "OAuth 2", nil, "MY_API_V2_OAUTH_2"},
		{"3d", "key", nil, "_3D_KEY"},
		{"", "key", nil, "KEY"},
		{"a", "b-c", []string{"A_B_C"}, "A_B_C_2"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := envName(tt.skill, tt.scheme, tt.taken); got != tt.want {
				t.Errorf("envName(%q, %q) = %q, want %q", tt.skill, tt.scheme, got, tt.want)
			}
		})
	}
}

func TestOperationSecurityIsKept(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
security: [{key: []}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
    token: {type: http, scheme: bearer}
paths:
  /a:
    get: {operationId: a, responses: {"200": {description: ok}}}
  /b:
    get: {operationId: b, security: [{token: []}], responses: {"200": {description: ok}}}
`
	doc, err := Parse([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Import(doc, &Options{Skill: "imp"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Headers["X-Key"] != "${env:IMP_KEY}" || res.Headers["Authorization"] != "Bearer ${env:IMP_TOKEN}" {
		t.Errorf("headers = %v; want both the document's and the operation's scheme", res.Headers)
	}
}
