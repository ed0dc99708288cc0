// Package openapi turns an OpenAPI 3.0.x or 3.1.x document, YAML or JSON,
// into the tools of one REST skill: one tool per operation, with an input
// schema that merges the operation's parameters and JSON body, a request
// template, an output schema when the response is an object, annotations,
// and skill headers that take the API's credentials from ${env:NAME}
// secrets.
//
// Schemas are converted to JSON Schema 2020-12. Every component schema a
// tool refers to is copied into that tool's "$defs" and its references are
// rewritten to "#/$defs/Name", so recursive schemas stay references and never
// loop; only the top of a response or request body schema is inlined.
//
// The package imports the root mcpgate package, netguard (to fetch
// documents), registry (to compile the schemas it makes) and the YAML
// parser; it must not import stores, the server or any backend.
package openapi

import (
	"path"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// Options says which operations to import and how.
type Options struct {
	// Skill is the skill's name, used to name secret variables.
	Skill string
	// Include holds glob patterns (path.Match) matched against a tool's
	// name, its operationId, or "METHOD /path"; empty imports every
	// operation.
	Include []string
	// Exclude holds patterns of the same kind, applied after Include.
	Exclude []string
	// BaseURL overrides the document's servers[0].
	BaseURL string
	// SourceURL is where the document came from, to resolve a relative
	// servers[0].url.
	SourceURL string
}

// Result is a skill's worth of tools made from a document.
type Result struct {
	// BaseURL is servers[0].url with its variables at their defaults, or
	// Options.BaseURL.
	BaseURL string
	// Headers are skill headers from the security schemes, their values
	// ${env:NAME} templates.
	Headers map[string]string
	// Secrets are the environment variables the headers and queries need,
	// sorted.
	Secrets []string
	// Tools are sorted by name; together they pass registry.Check as one
	// skill.
	Tools []*mcpgate.Tool
	// Skipped says, as "METHOD /path: reason", which operations were not
	// imported, and which security schemes could not be mapped.
	Skipped []string
}

// Import makes the tools of one skill from doc. Returns EINVALID for a bad
// pattern, when the document gives no absolute base URL and opts none, and
// when no operation is left to import.
func Import(doc *Document, opts *Options) (*Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkPatterns(o.Include, o.Exclude); err != nil {
		return nil, err
	}
	base, err := doc.baseURL(o.BaseURL, o.SourceURL)
	if err != nil {
		return nil, err
	}
	ops := doc.operations()
	sec := doc.security(ops, o.Skill)
	res := &Result{BaseURL: base, Headers: sec.headers, Secrets: sec.secrets, Skipped: sec.notes}
	selected := 0
	for _, op := range ops {
		if !o.selects(op) {
			continue
		}
		selected++
		tool, err := newTool(doc, op, sec)
		if err != nil {
			res.Skipped = append(res.Skipped, op.label()+": "+err.Error())
			continue
		}
		res.Tools = append(res.Tools, tool)
	}
	return res, res.check(o.Skill, len(ops), selected)
}

// check refuses an empty result and makes sure the tools pass the
// registry's checks as one skill.
func (r *Result) check(skill string, total, selected int) error {
	switch {
	case selected == 0:
		return mcpgate.Errorf(mcpgate.EINVALID, "no operation to import: none of the document's %d operations matches the patterns", total)
	case len(r.Tools) == 0:
		return mcpgate.Errorf(mcpgate.EINVALID, "no operation to import: every selected operation was skipped (%s)", r.Skipped[len(r.Skipped)-1])
	}
	slices.SortFunc(r.Tools, func(a, b *mcpgate.Tool) int { return strings.Compare(a.Name, b.Name) })
	if skill == "" {
		skill = "openapi"
	}
	s := &mcpgate.Skill{Name: skill, Kind: mcpgate.SkillREST, BaseURL: r.BaseURL, Headers: r.Headers, Tools: r.Tools}
	return registry.Check([]*mcpgate.Skill{s})
}

// checkPatterns returns EINVALID naming the first malformed pattern.
func checkPatterns(lists ...[]string) error {
	for _, list := range lists {
		for _, p := range list {
			if _, err := path.Match(p, "x"); err != nil {
				return mcpgate.Errorf(mcpgate.EINVALID, "pattern %q is malformed: %v", p, err)
			}
		}
	}
	return nil
}

// selects reports whether the options import op.
func (o *Options) selects(op *operation) bool {
	if len(o.Include) > 0 && !matchesAny(o.Include, op) {
		return false
	}
	return !matchesAny(o.Exclude, op)
}

// matchesAny reports whether a pattern matches op's tool name, its
// operationId or "METHOD /path".
func matchesAny(patterns []string, op *operation) bool {
	for _, p := range patterns {
		for _, s := range []string{op.name, op.id, op.method + " " + op.path} {
			if ok, _ := path.Match(p, s); ok && s != "" {
				return true
			}
		}
	}
	return false
}
