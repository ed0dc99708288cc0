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
	"fmt"
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
	// Skipped says which security schemes could not be mapped, and which
	// operations were not imported (each as its Skip's String), as
	// warnings to show the user.
	Skipped []string
	// SkippedOperations are the operations, and path items, that were not
	// imported: each with its JSON pointer, its line in a YAML document,
	// and why.
	SkippedOperations []Skip
}

// maxListed is how many skipped operations an error lists.
const maxListed = 10

// Import makes the tools of one skill from doc. Returns EINVALID for a bad
// pattern, when the document gives no absolute base URL and opts none, and
// when no operation is left to import (the message then lists why the
// operations were skipped).
func Import(doc *Document, opts *Options) (*Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := checkPatterns(o.Include, o.Exclude); err != nil {
		return nil, err
	}
	ops := doc.operations()
	sec := doc.security(ops, o.Skill)
	res := &Result{Headers: sec.headers, Secrets: sec.secrets, Skipped: sec.notes}
	selected := 0
	for _, op := range ops {
		if !o.selects(op) {
			continue
		}
		selected++
		tool, err := newTool(doc, op, sec)
		if err != nil {
			res.skip(doc, op, err)
			continue
		}
		res.Tools = append(res.Tools, tool)
	}
	base, baseErr := doc.baseURL(o.BaseURL, o.SourceURL)
	res.BaseURL = base
	if err := res.nothing(&o, len(ops), selected); err != nil {
		return nil, alsoBaseURL(err, baseErr)
	}
	if baseErr != nil {
		return nil, baseErr
	}
	return res, res.check(o.Skill)
}

// nothing returns EINVALID saying why no operation is left to import, or
// nil when some are: no patterns match, the document has none, or every
// one was skipped (listing why).
func (r *Result) nothing(o *Options, total, selected int) error {
	switch {
	case len(r.Tools) > 0:
		return nil
	case selected == 0 && total > 0:
		return mcpgate.Errorf(mcpgate.EINVALID, "no operation to import: none of the document's %d operations matches the patterns%s", total, o.patterns())
	case total == 0:
		return mcpgate.Errorf(mcpgate.EINVALID, "no operation to import: the document's paths hold no operations")
	}
	reasons := make([]string, 0, maxListed)
	for i, s := range r.SkippedOperations {
		if i == maxListed {
			reasons = append(reasons, fmt.Sprintf("and %d more", len(r.SkippedOperations)-maxListed))
			break
		}
		reasons = append(reasons, s.String())
	}
	return mcpgate.Errorf(mcpgate.EINVALID, "no operation to import: every operation was skipped: %s", strings.Join(reasons, "; "))
}

// patterns describes the options' patterns for a message.
func (o *Options) patterns() string {
	var parts []string
	if len(o.Include) > 0 {
		parts = append(parts, "include "+strings.Join(o.Include, ", "))
	}
	if len(o.Exclude) > 0 {
		parts = append(parts, "exclude "+strings.Join(o.Exclude, ", "))
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// alsoBaseURL adds the base URL's problem, if any, to err's message, so
// that one attempt tells the user everything to fix.
func alsoBaseURL(err, baseErr error) error {
	if baseErr == nil {
		return err
	}
	return mcpgate.Errorf(mcpgate.EINVALID, "%s; also, %s", mcpgate.ErrorMessage(err), mcpgate.ErrorMessage(baseErr))
}

// check sorts the tools and makes sure they pass the registry's checks as
// one skill.
func (r *Result) check(skill string) error {
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
