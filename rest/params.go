package rest

import (
	"bytes"
	"maps"
	"slices"

	"github.com/mcpgate/mcpgate"
)

// Params returns the argument names a tool's request refers to, in its URL
// or path, query, headers and body, each once: what a config validator must
// find declared in the tool's input schema. Header values of the skill may
// refer to arguments too; see Placeholders.
func Params(req *mcpgate.Request) []string {
	var names []string
	addName := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	add := func(s string) {
		for _, n := range Placeholders(s) {
			addName(n)
		}
	}
	add(req.URL)
	add(req.Path)
	for _, k := range slices.Sorted(maps.Keys(req.Query)) {
		add(req.Query[k])
	}
	for _, k := range slices.Sorted(maps.Keys(req.Headers)) {
		add(req.Headers[k])
	}
	if req.Body != nil {
		for _, f := range req.Body.Fields {
			addName(f)
		}
		walkTemplate(req.Body.Template, new(bytes.Buffer), func(s string, _ *bytes.Buffer) error {
			add(s)
			return nil
		})
	}
	return names
}
