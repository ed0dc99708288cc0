package rest

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// fuzzArgs returns the arguments {"<name>": value, "n": 1}, and value as it
// reads back from JSON (invalid UTF-8 replaced).
func fuzzArgs(tb testing.TB, name, value string) (args, string) {
	tb.Helper()
	raw, _ := json.Marshal(map[string]any{name: value, "n": 1})
	a := mustArgs(tb, string(raw))
	var back string
	json.Unmarshal(a[name], &back)
	return a, back
}

// mustParseURL parses a URL the expander built, failing the test if it is
// not a valid absolute URL.
func mustParseURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Host != "h" || u.Fragment != "" {
		tb.Fatalf("built URL %q is not valid: %v", s, err)
	}
	return u
}

// FuzzPathArgument checks that a path argument cannot change the number of
// path segments, add a query or fragment, or escape its segment.
func FuzzPathArgument(f *testing.F) {
	f.Add("../../admin?x=1#f")
	templates := []string{"/users/{id}", "/a/{id}/b", "/files/{id}.json", "/{id}{n}/x"}
	f.Fuzz(func(t *testing.T, value string) {
		a, back := fuzzArgs(t, "id", value)
		for _, tpl := range templates {
			e := &expander{args: a}
			s, err := e.buildURL(&mcpgate.Skill{BaseURL: "http://h/api"}, &mcpgate.Request{Path: tpl})
			if err != nil {
				if mcpgate.ErrorCode(err) != mcpgate.EINVALID {
					t.Fatalf("buildURL(%q): %v", tpl, err)
				}
				continue
			}
			u := mustParseURL(t, s)
			if got, want := strings.Count(u.EscapedPath(), "/"), strings.Count("/api"+tpl, "/"); got != want || u.RawQuery != "" {
				t.Fatalf("template %q, value %q: URL %q has %d slashes, want %d, and query %q", tpl, value, s, got, want, u.RawQuery)
			}
			if tpl == "/users/{id}" && strings.TrimPrefix(u.Path, "/api/users/") != back {
				t.Fatalf("value %q reads back from %q as %q", back, s, u.Path)
			}
		}
	})
}

// FuzzQueryArgument checks that a query argument reads back unchanged and
// cannot add parameters.
func FuzzQueryArgument(f *testing.F) {
	f.Add("a&b=c")
	f.Fuzz(func(t *testing.T, value string) {
		a, back := fuzzArgs(t, "q", value)
		e := &expander{args: a}
		req := &mcpgate.Request{Path: "/s", Query: map[string]string{"q": "{q}", "f": "x{q}y"}}
		s, err := e.buildURL(&mcpgate.Skill{BaseURL: "http://h"}, req)
		if err != nil {
			t.Fatalf("buildURL: %v", err)
		}
		u := mustParseURL(t, s)
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil || len(q) != 2 || len(q["q"]) != 1 || q.Get("q") != back || q.Get("f") != "x"+back+"y" || u.Path != "/s" {
			t.Fatalf("value %q: URL %q reads back as %v, %v", back, s, q, err)
		}
	})
}

// FuzzTemplates checks that any path, query and header templates, with any
// argument, never panic and give either an error or a valid URL with as
// many path segments as the template.
func FuzzTemplates(f *testing.F) {
	f.Add("/a/{x}/b", "{x}", "v")
	f.Fuzz(func(t *testing.T, pathTpl, tpl, value string) {
		a, _ := fuzzArgs(t, "x", value)
		e := &expander{args: a, lookup: testLookup(map[string]string{"K": "v"})}
		req := &mcpgate.Request{Path: pathTpl, Query: map[string]string{"q": tpl}, Headers: map[string]string{"X-H": tpl}}
		s, err := e.buildURL(&mcpgate.Skill{BaseURL: "http://h"}, req)
		if _, herr := e.headers(nil, req.Headers); herr == nil && err == nil {
			e.body(mcpgate.BodyAll, nil)
		}
		if err != nil {
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			return // the caller refuses what does not parse
		}
		want := strings.Count(joinPath("", pathTpl), "/")
		if got := strings.Count(u.EscapedPath(), "/"); u.Host == "h" && !strings.Contains(pathTpl, "%") && !strings.ContainsAny(pathTpl, "?#") && got != want {
			t.Fatalf("path template %q with %q: URL %q has %d slashes, want %d", pathTpl, value, s, got, want)
		}
	})
}

// FuzzBodyTemplate checks that a valid JSON template, filled with any
// argument, is valid JSON.
func FuzzBodyTemplate(f *testing.F) {
	f.Add(`{"a": "{x}", "b": ["x {x} y", "{n}", "{missing}"]}`, "v")
	f.Fuzz(func(t *testing.T, tpl, value string) {
		a, _ := fuzzArgs(t, "x", value)
		e := &expander{args: a}
		body, err := e.template(json.RawMessage(tpl))
		if err != nil {
			if json.Valid([]byte(tpl)) {
				t.Fatalf("template %q is valid JSON but gave %v", tpl, err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("template %q with %q gave invalid JSON %q", tpl, value, body)
		}
	})
}

// FuzzHeaderArgument checks that a header argument cannot break the header
// into two.
func FuzzHeaderArgument(f *testing.F) {
	f.Add("a\r\nX-Evil: 1")
	f.Fuzz(func(t *testing.T, value string) {
		a, _ := fuzzArgs(t, "x", value)
		e := &expander{args: a}
		h, err := e.headers(nil, map[string]string{"X-H": "v {x}"})
		if err != nil {
			return
		}
		if v := h.Get("X-H"); strings.ContainsAny(v, "\r\n\x00") || len(h) != 1 {
			t.Fatalf("value %q gave headers %q", value, h)
		}
	})
}
