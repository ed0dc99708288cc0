package rest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

func TestCutPlaceholder(t *testing.T) {
	tests := []struct {
		in                  string
		before, name, after string
		found               bool
	}{
		{"/users/{id}/posts", "/users/", "id", "/posts", true},
		{"{a}{b}", "", "a", "{b}", true},
		{"Bearer ${env:TOKEN}", "Bearer ${env:TOKEN}", "", "", false},
		{"${env:A} {user_id}", "${env:A} ", "user_id", "", true},
		{"{}", "{}", "", "", false},
		{"{1x}", "{1x}", "", "", false},
		{"{x1.y-z}", "", "x1.y-z", "", true},
		{"{ x }", "{ x }", "", "", false},
		{"{{x}}", "{", "x", "}", true},
		{"{x", "{x", "", "", false},
		{"", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			before, name, after, found := cutPlaceholder(tt.in)
			got := []any{before, name, after, found}
			want := []any{tt.before, tt.name, tt.after, tt.found}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("cutPlaceholder(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	got := Placeholders("/{org}/{repo}/issues/{number}?x={org}&k=${env:KEY}")
	if diff := cmp.Diff([]string{"org", "repo", "number"}, got); diff != "" {
		t.Errorf("Placeholders (-want +got):\n%s", diff)
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		name string
		req  *mcpgate.Request
		want []string
	}{
		{"path query headers fields", &mcpgate.Request{
			Path:    "/repos/{owner}/{repo}",
			Query:   map[string]string{"state": "{state}", "per_page": "{limit}", "label": "x-{state}"},
			Headers: map[string]string{"X-Trace": "{trace}", "Authorization": "Bearer ${env:TOKEN}"},
			Body:    &mcpgate.RequestBody{Mode: mcpgate.BodyFields, Fields: []string{"title", "owner"}},
		}, []string{"owner", "repo", "state", "limit", "trace", "title"}},
		{"url and template", &mcpgate.Request{
			URL:  "https://api.example.com/v1/{kind}/search",
			Body: &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: json.RawMessage(`{"{key}": "{q}", "n": [1, "{n}", {"deep": "a {kind} b"}]}`)},
		}, []string{"kind", "q", "n"}},
		{"none", &mcpgate.Request{Path: "/health"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Params(tt.req)); diff != "" {
				t.Errorf("Params (-want +got):\n%s", diff)
			}
		})
	}
}
