package upstream

import (
	"strings"
	"testing"
)

func TestTemplateMatch(t *testing.T) {
	tests := []struct {
		template string
		uri      string
		want     bool
	}{
		// Simple expansion, with comma lists; a value never crosses "/", "?" or "#".
		{"test://template/{id}/data", "test://template/123/data", true},
		{"test://template/{id}/data", "test://template/a%2Fb/data", true},
		{"test://template/{id}/data", "test://template//data", true}, // an empty value
		{"test://template/{id}/data", "test://template/1/2/data", false},
		{"test://template/{id}/data", "test://template/123/datum", false},
		{"test://template/{id}/data", "test://other/123/data", false},
		{"test://template/{id}/data", "test://template/123/data/more", false},
		{"test://template/{id}/data", "test://template/1?x/data", false},
		{"map://{x,y}", "map://1024,768", true},
		{"map://{x,y}", "map://1024", true},
		{"map://{x,y}", "map://1024/768", false},
		{"file:///{name}", "file:///notes.txt", true},
		{"file:///{name}", "file:///dir/notes.txt", false},
		{"file:///{name:3}", "file:///abc", true},
		{"file:///{list*}", "file:///a,b,c", true},
		{"exact://no-expression", "exact://no-expression", true},
		{"exact://no-expression", "exact://no-expression/", false},
		{"lit://a.b+c/{x}", "lit://a.b+c/1", true},
		{"lit://a.b+c/{x}", "lit://aXbbc/1", false}, // literals are not patterns

		// Reserved and fragment expansions may cross "/", "?" and "#".
		{"file:///{+path}", "file:///dir/sub/notes.txt", true},
		{"file:///{+path}", "file:///", true},
		{"file:///{+path}/meta", "file:///a/b/meta", true},
		{"file:///{+path}/meta", "file:///a/b/data", false},
		{"doc://x{#section}", "doc://x#intro/part?2", true},
		{"doc://x{#section}", "doc://x", true},
		{"doc://x{#section}", "doc://xy", false},
		{"doc://{+base}{#a,b}", "doc://h/p#1,2", true},

		// Label expansion.
		{"host://www{.domain}", "host://www.example.com", true},
		{"host://www{.domain}", "host://www", true},
		{"host://www{.domain}", "host://wwwexample", false},
		{"host://www{.domain}", "host://www.a/b", false},

		// Path expansion: one segment per variable unless exploded.
		{"repo://r{/owner,name}", "repo://r/mcp/gate", true},
		{"repo://r{/owner,name}", "repo://r/mcp", true},
		{"repo://r{/owner,name}", "repo://r", true},
		{"repo://r{/owner,name}", "repo://r/mcp/gate/extra", false},
		{"repo://r{/owner,name}", "repo://rmcp", false},
		{"repo://r{/path*}", "repo://r/a/b/c/d", true},
		{"repo://r{/path*}/x", "repo://r/a/b/x", true},

		// Path-style parameters.
		{"m://p{;x,y}", "m://p;x=1;y=2", true},
		{"m://p{;x,y}", "m://p;x", true},
		{"m://p{;x,y}", "m://p;z=1", false},
		{"m://p{;x,y}", "m://p;x=1/2", false},
		{"m://p{;keys*}", "m://p;semi=%3B;dot=.", true},

		// Query and query continuation.
		{"search://s{?q,lang}", "search://s?q=cat&lang=en", true},
		{"search://s{?q,lang}", "search://s?lang=en", true},
		{"search://s{?q,lang}", "search://s", true},
		{"search://s{?q,lang}", "search://s?q=", true},
		{"search://s{?q,lang}", "search://s?page=2", false},
		{"search://s{?q,lang}", "search://s?q=a/b", false},
		{"search://s{?q,lang}", "search://s?q", false},
		{"search://s{?q}{&page}", "search://s?q=cat&page=2", true},
		{"search://s?fixed=1{&page}", "search://s?fixed=1&page=2", true},
		{"search://s?fixed=1{&page}", "search://s?fixed=1&size=2", false},
		{"search://s{?filter*}", "search://s?a=1&b=2", true},
		{"search://s{?q}#top", "search://s?q=x#top", true},
	}
	for _, tt := range tests {
		t.Run(tt.template+" "+tt.uri, func(t *testing.T) {
			tmpl, err := parseTemplate(tt.template)
			if err != nil {
				t.Fatal(err)
			}
			if got := tmpl.match(tt.uri); got != tt.want {
				t.Errorf("match = %v, want %v (pattern %s)", got, tt.want, tmpl.re)
			}
		})
	}
}

func TestParseTemplate(t *testing.T) {
	tests := []struct {
		template string
		prefix   int
		errHas   string // "" means valid
	}{
		{"test://template/{id}/data", len("test://template/"), ""},
		{"{+path}", 0, ""},
		{"plain://uri", len("plain://uri"), ""},
		{"x://{var.sub}/{%41b}", len("x://"), ""},
		{"x://{unclosed", 0, "unclosed expression"},
		{"x://{}", 0, `invalid variable ""`},
		{"x://{a,}", 0, `invalid variable ""`},
		{"x://{a b}", 0, `invalid variable "a b"`},
		{"x://{=a}", 0, `operator "=" is reserved`},
		{"x://{|a}", 0, `operator "|" is reserved`},
		{"x://{a:0}", 0, "invalid prefix length"},
		{"x://{a:10000}", 0, "invalid prefix length"},
		{"x://{a:x}", 0, "invalid prefix length"},
		{"x://{/" + strings.Repeat("a,", 1000) + "a}", 0, "invalid repeat count"},
	}
	for _, tt := range tests {
		name := tt.template
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		t.Run(name, func(t *testing.T) {
			tmpl, err := parseTemplate(tt.template)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.prefix != tt.prefix {
				t.Errorf("prefix = %d, want %d", tmpl.prefix, tt.prefix)
			}
		})
	}
}

// Any template either fails to parse or matches without panicking, and a
// template without expressions matches exactly itself.
func FuzzTemplate(f *testing.F) {
	for _, seed := range []string{"test://template/{id}/data", "file:///{+path}", "s{?q,lang}{&p}", "r{/a,b*}", "x{;k:3}", "{", "plain://x"} {
		f.Add(seed, "test://template/1/data")
	}
	f.Fuzz(func(t *testing.T, template, uri string) {
		tmpl, err := parseTemplate(template)
		if err != nil {
			return
		}
		tmpl.match(uri)
		if !strings.Contains(template, "{") && tmpl.match(template+"x") {
			t.Errorf("literal template %q matches more than itself", template)
		}
		if !strings.Contains(template, "{") && !tmpl.match(template) {
			t.Errorf("literal template %q does not match itself", template)
		}
	})
}
