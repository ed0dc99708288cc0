package rest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// mustArgs parses a JSON object of arguments.
func mustArgs(tb testing.TB, s string) args {
	tb.Helper()
	a, err := parseArgs(json.RawMessage(s))
	if err != nil {
		tb.Fatalf("parseArgs(%s): %v", s, err)
	}
	return a
}

// testLookup is a LookupFunc over a fixed set of variables.
func testLookup(vars map[string]string) mcpgate.LookupFunc {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestBuildURL(t *testing.T) {
	lookup := testLookup(map[string]string{"KEY": "s3cr3t"})
	tests := []struct {
		name    string
		base    string
		req     mcpgate.Request
		args    string
		want    string
		wantErr string
	}{
		{"join", "https://api.example.com/v1/", mcpgate.Request{Path: "/users"}, `{}`, "https://api.example.com/v1/users", ""},
		{"join no slashes", "https://api.example.com/v1", mcpgate.Request{Path: "users"}, `{}`, "https://api.example.com/v1/users", ""},
		{"empty path", "https://api.example.com/v1", mcpgate.Request{}, `{}`, "https://api.example.com/v1", ""},
		{"base without path", "https://api.example.com", mcpgate.Request{Path: "/x"}, `{}`, "https://api.example.com/x", ""},
		{"base query kept", "https://api.example.com/v1?v=2", mcpgate.Request{Path: "/x", Query: map[string]string{"a": "b"}}, `{}`, "https://api.example.com/v1/x?v=2&a=b", ""},
		{"absolute url", "https://ignored.example", mcpgate.Request{URL: "https://other.example/a/{id}?fixed=1#frag"}, `{"id": 7}`, "https://other.example/a/7?fixed=1", ""},
		{"string arg escaped", "https://h", mcpgate.Request{Path: "/users/{id}"}, `{"id": "a/b?c#d e"}`, "https://h/users/a%2Fb%3Fc%23d%20e", ""},
		{"number and bool", "https://h", mcpgate.Request{Path: "/{n}/{b}/{f}"}, `{"n": 42, "b": true, "f": 1.5e3}`, "https://h/42/true/1.5e3", ""},
		{"placeholders in one segment", "https://h", mcpgate.Request{Path: "/files/{name}.{ext}"}, `{"name": "..", "ext": "txt"}`, "https://h/files/...txt", ""},
		{"dot dot refused", "https://h", mcpgate.Request{Path: "/files/{name}/x"}, `{"name": ".."}`, "", `".." cannot be a segment`},
		{"dot refused", "https://h", mcpgate.Request{Path: "/files/{name}"}, `{"name": "."}`, "", "cannot be a segment"},
		{"empty refused", "https://h", mcpgate.Request{Path: "/files/{name}"}, `{"name": ""}`, "", "cannot be a segment"},
		{"missing path arg", "https://h", mcpgate.Request{Path: "/users/{id}"}, `{}`, "", `argument "id" is required`},
		{"null path arg", "https://h", mcpgate.Request{Path: "/users/{id}"}, `{"id": null}`, "", `argument "id" is required`},
		{"query whole", "https://h", mcpgate.Request{Path: "/s", Query: map[string]string{"q": "{q}", "n": "{n}"}}, `{"q": "a b&c=d", "n": 5}`, "https://h/s?n=5&q=a+b%26c%3Dd", ""},
		{"query absent omitted", "https://h", mcpgate.Request{Path: "/s", Query: map[string]string{"q": "{q}", "page": "{page}"}}, `{"q": "x", "page": null}`, "https://h/s?q=x", ""},
		{"query array repeated", "https://h", mcpgate.Request{Path: "/s", Query: map[string]string{"tag": "{tags}"}}, `{"tags": ["a", 1, null, "c d"]}`, "https://h/s?tag=a&tag=1&tag=c+d", ""},
		{"query interpolated", "https://h", mcpgate.Request{Path: "/s", Query: map[string]string{"filter": "name eq '{name}' and age gt {age}"}}, `{"name": "bo"}`, "https://h/s?filter=name+eq+%27bo%27+and+age+gt+", ""},
		{"query secret", "https://h", mcpgate.Request{Path: "/s", Query: map[string]string{"api_key": "${env:KEY}"}}, `{}`, "https://h/s?api_key=s3cr3t", ""},
		{"query secret missing", "https://h", mcpgate.Request{Path: "/s", Query: map[string]string{"k": "${env:NOPE}"}}, `{}`, "", "NOPE is not set"},
		{"argument cannot inject a secret", "https://h", mcpgate.Request{Path: "/s", Query: map[string]string{"q": "x{q}"}}, `{"q": "${env:KEY}"}`, "https://h/s?q=x%24%7Benv%3AKEY%7D", ""},
		{"no url", "", mcpgate.Request{Path: "/x"}, `{}`, "", "has no URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &expander{args: mustArgs(t, tt.args), lookup: lookup}
			got, err := e.buildURL(&mcpgate.Skill{BaseURL: tt.base}, &tt.req)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(mcpgate.ErrorMessage(err), tt.wantErr) {
					t.Fatalf("buildURL = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("buildURL: %v", err)
			case got != tt.want:
				t.Errorf("buildURL = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"https://user:pw@api.example.com/v1/x?key=secret#f": "https://api.example.com/v1/x",
		"https://api.example.com?key=secret":                "https://api.example.com",
		"http://h:8080/p":                                   "http://h:8080/p",
	}
	for in, want := range tests {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
