package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

func TestBodyMode(t *testing.T) {
	tests := []struct {
		method string
		body   *mcpgate.RequestBody
		want   string
	}{
		{http.MethodGet, nil, mcpgate.BodyNone},
		{http.MethodHead, nil, mcpgate.BodyNone},
		{http.MethodDelete, nil, mcpgate.BodyNone},
		{http.MethodOptions, nil, mcpgate.BodyNone},
		{http.MethodPost, nil, mcpgate.BodyAll},
		{http.MethodPut, nil, mcpgate.BodyAll},
		{http.MethodPatch, &mcpgate.RequestBody{}, mcpgate.BodyAll},
		{http.MethodGet, &mcpgate.RequestBody{Mode: mcpgate.BodyAll}, mcpgate.BodyAll},
		{http.MethodPost, &mcpgate.RequestBody{Mode: mcpgate.BodyNone}, mcpgate.BodyNone},
	}
	for _, tt := range tests {
		if got := bodyMode(tt.method, tt.body); got != tt.want {
			t.Errorf("bodyMode(%s, %+v) = %q, want %q", tt.method, tt.body, got, tt.want)
		}
	}
}

func TestBody(t *testing.T) {
	tests := []struct {
		name    string
		req     mcpgate.Request
		args    string
		want    string // "" for no body
		wantErr string
	}{
		{"all without consumed", mcpgate.Request{
			Method: "POST", Path: "/repos/{owner}/issues",
			Query:   map[string]string{"draft": "{draft}"},
			Headers: map[string]string{"X-Request-Id": "{rid}"},
		}, `{"owner": "me", "draft": true, "rid": "r1", "title": "Bug", "labels": ["a", "b"], "meta": {"x": null}}`,
			`{"labels":["a","b"],"meta":{"x":null},"title":"Bug"}`, ""},
		{"all with nothing left", mcpgate.Request{Method: "POST", Path: "/x/{id}"}, `{"id": 1}`, `{}`, ""},
		{"fields", mcpgate.Request{Method: "PUT", Path: "/x", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyFields, Fields: []string{"a", "c", "missing"}}},
			`{"a": 1, "b": 2, "c": "three"}`, `{"a":1,"c":"three"}`, ""},
		{"none", mcpgate.Request{Method: "POST", Path: "/x", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyNone}}, `{"a": 1}`, "", ""},
		{"get has none", mcpgate.Request{Path: "/x"}, `{"a": 1}`, "", ""},
		{"template", mcpgate.Request{Method: "POST", Path: "/x", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: json.RawMessage(
			`{"query": {"match": "{q}"}, "size": "{size}", "from": "{from}", "note": "by {user} at {n}", "keep": ["{q}", 1.50, true, null, "{{literal}"], "{q}": "{obj}"}`)}},
			`{"q": "cats", "size": 10, "user": "bo \"b\"", "n": 3, "obj": {"k": [1]}}`,
			`{"query":{"match":"cats"},"size":10,"from":null,"note":"by bo \"b\" at 3","keep":["cats",1.50,true,null,"{"],"{q}":{"k":[1]}}`, ""},
		{"template not JSON", mcpgate.Request{Method: "POST", Path: "/x", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: json.RawMessage(`{"a": `)}}, `{}`, "", "not valid JSON"},
		{"template two values", mcpgate.Request{Method: "POST", Path: "/x", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: json.RawMessage(`{} {}`)}}, `{}`, "", "not valid JSON"},
		{"unknown mode", mcpgate.Request{Method: "POST", Path: "/x", Body: &mcpgate.RequestBody{Mode: "xml"}}, `{}`, "", `body mode "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &expander{args: mustArgs(t, tt.args), lookup: testLookup(nil)}
			skill := &mcpgate.Skill{BaseURL: "https://h"}
			if _, err := e.buildURL(skill, &tt.req); err != nil {
				t.Fatal(err)
			}
			if _, err := e.headers(nil, tt.req.Headers); err != nil {
				t.Fatal(err)
			}
			got, err := e.body(bodyMode(requestMethod(&tt.req), tt.req.Body), tt.req.Body)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(mcpgate.ErrorMessage(err), tt.wantErr) {
					t.Fatalf("body = %s, %v; want an error containing %q", got, err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("body: %v", err)
			case tt.want == "" && got != nil:
				t.Errorf("body = %s, want none", got)
			case tt.want != "":
				if diff := cmp.Diff(tt.want, string(got)); diff != "" || !json.Valid(got) {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	lookup := testLookup(map[string]string{"TOKEN": "t0k", "BAD": "a\r\nX-Evil: 1"})
	tests := []struct {
		name        string
		skill, tool map[string]string
		args        string
		want        http.Header
		wantErr     string
	}{
		{"skill then tool", map[string]string{"Authorization": "Bearer ${env:TOKEN}", "X-A": "skill"}, map[string]string{"x-a": "tool {v}"}, `{"v": 2}`,
			http.Header{"Authorization": {"Bearer t0k"}, "X-A": {"tool 2"}}, ""},
		{"whole placeholder absent", nil, map[string]string{"If-Match": "{etag}"}, `{}`, http.Header{}, ""},
		{"argument with a line break", nil, map[string]string{"X-Name": "{name}"}, `{"name": "a\r\nX-Evil: 1"}`, nil, "line break"},
		{"secret with a line break", map[string]string{"X-Key": "${env:BAD}"}, nil, `{}`, nil, "line break"},
		{"argument with NUL", nil, map[string]string{"X-Name": "{name}"}, `{"name": "a\u0000b"}`, nil, "control character"},
		{"argument cannot inject a secret", nil, map[string]string{"X-Name": "{name}"}, `{"name": "${env:TOKEN}"}`, http.Header{"X-Name": {"${env:TOKEN}"}}, ""},
		{"missing secret", nil, map[string]string{"X-Key": "${env:MISSING}"}, `{}`, nil, "MISSING is not set"},
		{"bad name", nil, map[string]string{"X Bad": "v"}, `{}`, nil, `header name "X Bad"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &expander{args: mustArgs(t, tt.args), lookup: lookup}
			got, err := e.headers(tt.skill, tt.tool)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(mcpgate.ErrorMessage(err), tt.wantErr) {
					t.Fatalf("headers = %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
			case err != nil:
				t.Fatalf("headers: %v", err)
			default:
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("headers (-want +got):\n%s", diff)
				}
			}
		})
	}
}
