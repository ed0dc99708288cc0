package openapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/rest"
)

// param is one resolved parameter of an operation.
type param struct {
	name, in, description string
	required              bool
	schema                any
}

// locations orders parameters: when two would get the same argument name,
// the earlier location keeps it.
var locations = []string{"path", "query", "header", "cookie"}

// pathPlaceholder matches a {name} in an OpenAPI path.
var pathPlaceholder = regexp.MustCompile(`\{([^{}/]+)\}`)

// ignoredHeaders are header parameters OpenAPI says to ignore.
var ignoredHeaders = []string{"accept", "authorization", "content-type"}

// parameters returns the operation's parameters, the path item's
// overridden by the operation's, ordered by location. A path placeholder
// no parameter declares becomes a required string; a path parameter the
// path does not hold is left out.
func (b *toolBuilder) parameters() ([]param, error) {
	var list []param
	index := map[string]int{}
	for _, src := range []any{b.op.item["parameters"], b.op.op["parameters"]} {
		items, ok := src.([]any)
		if !ok && src != nil {
			return nil, fmt.Errorf("parameters is not a list")
		}
		for _, raw := range items {
			p, err := b.param(raw)
			if err != nil {
				return nil, err
			}
			key := p.in + " " + p.name
			if i, ok := index[key]; ok {
				list[i] = p
				continue
			}
			index[key] = len(list)
			list = append(list, p)
		}
	}
	list = b.matchPath(list, index)
	slices.SortStableFunc(list, func(x, y param) int {
		return slices.Index(locations, x.in) - slices.Index(locations, y.in)
	})
	return list, nil
}

// matchPath adds the path's undeclared placeholders and drops path
// parameters the path does not hold.
func (b *toolBuilder) matchPath(list []param, index map[string]int) []param {
	var inPath []string
	for _, m := range pathPlaceholder.FindAllStringSubmatch(b.op.path, -1) {
		inPath = append(inPath, m[1])
		if _, ok := index["path "+m[1]]; !ok {
			index["path "+m[1]] = len(list)
			list = append(list, param{name: m[1], in: "path", required: true, schema: map[string]any{"type": "string"}})
		}
	}
	return slices.DeleteFunc(list, func(p param) bool { return p.in == "path" && !slices.Contains(inPath, p.name) })
}

// param resolves one parameter.
func (b *toolBuilder) param(raw any) (param, error) {
	m, err := b.doc.resolveObject(raw, "a parameter")
	if err != nil {
		return param{}, err
	}
	p := param{name: stringField(m, "name"), in: stringField(m, "in"), description: stringField(m, "description")}
	if p.name == "" || !slices.Contains(locations, p.in) {
		return param{}, fmt.Errorf("parameter %q: in %q is not one of path, query, header, cookie", p.name, p.in)
	}
	p.required, _ = m["required"].(bool)
	p.required = p.required || p.in == "path"
	p.schema = m["schema"]
	if content := object(m["content"]); p.schema == nil && len(content) > 0 {
		_, media := chooseMedia(content)
		p.schema = object(media)["schema"]
	}
	if p.schema == nil {
		p.schema = map[string]any{"type": "string"}
	}
	return p, nil
}

// addParams adds the parameters to the input schema and the request:
// path placeholders, query values and headers naming their arguments.
// Parameters the credentials supply, and headers OpenAPI says to ignore,
// are left out; so are optional cookies, while a required cookie is an
// error.
func (b *toolBuilder) addParams(params []param) error {
	pathArgs := map[string]string{}
	for _, p := range params {
		skip, err := b.skipParam(p)
		if err != nil {
			return err
		} else if skip {
			continue
		}
		arg := b.argName(p)
		if err := b.addArgument(arg, p.schema, p.description, p.required); err != nil {
			return err
		}
		switch p.in {
		case "path":
			pathArgs[p.name] = arg
		case "query":
			b.req.Query = setValue(b.req.Query, p.name, "{"+arg+"}")
		case "header":
			b.req.Headers = setValue(b.req.Headers, p.name, "{"+arg+"}")
		}
	}
	b.req.Path = pathPlaceholder.ReplaceAllStringFunc(b.op.path, func(s string) string {
		return "{" + pathArgs[s[1:len(s)-1]] + "}"
	})
	return nil
}

// skipParam reports whether a parameter stays out of the tool, or, for a
// required cookie or a malformed header name, why the operation cannot be
// imported.
func (b *toolBuilder) skipParam(p param) (bool, error) {
	switch p.in {
	case "cookie":
		if p.required {
			return true, fmt.Errorf("cookie parameter %q is not supported", p.name)
		}
		return true, nil
	case "header":
		if slices.Contains(ignoredHeaders, strings.ToLower(p.name)) || b.sec.hasHeader(p.name) {
			return true, nil
		}
		if !rest.ValidToken(p.name) {
			return true, fmt.Errorf("header parameter %q is not a valid header name", p.name)
		}
	case "query":
		_, secret := b.sec.query[p.name]
		return secret, nil
	}
	return false, nil
}

// argName returns an unused argument name for a parameter: its name made
// fit for a {placeholder}, else prefixed by its location, else with a
// numeric suffix.
func (b *toolBuilder) argName(p param) string {
	base := invalidNameChars.ReplaceAllString(p.name, "_")
	if c := base[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_') {
		base = "_" + base
	}
	if !b.taken[base] {
		return base
	}
	return b.unused(p.in + "_" + base)
}

// unused returns base, or base with the first free suffix _2, _3 ...
func (b *toolBuilder) unused(base string) string {
	name := base
	for i := 2; b.taken[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	return name
}
