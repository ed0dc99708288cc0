package openapi

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// methods are the operations a path item may hold, in the order tools are
// named when two would get the same name.
var methods = []string{"delete", "get", "head", "options", "patch", "post", "put", "trace"}

// operation is one operation of the document, with its tool's name.
type operation struct {
	method string // upper case
	path   string
	id     string // operationId, or ""
	name   string // the tool's name, unique in the document
	item   map[string]any
	op     map[string]any
}

// label names the operation in Skipped.
func (o *operation) label() string { return o.method + " " + o.path }

// operations lists the document's operations sorted by path, then method,
// each with a unique tool name: later ones that would share a name get _2,
// _3 and so on. Path items that cannot be resolved are left out.
func (d *Document) operations() []*operation {
	paths := object(d.root["paths"])
	var ops []*operation
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, err := d.resolveObject(paths[p], "path item")
		if err != nil {
			continue
		}
		for _, m := range methods {
			if op, ok := item[m].(map[string]any); ok {
				id, _ := op["operationId"].(string)
				ops = append(ops, &operation{method: strings.ToUpper(m), path: p, id: id, item: item, op: op})
			}
		}
	}
	taken := map[string]bool{}
	for _, o := range ops {
		o.name = uniqueName(baseName(o), taken)
	}
	return ops
}

// invalidNameChars matches what a tool name may not hold, nor an
// argument's or a $defs entry's name.
var invalidNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// baseName names an operation's tool from its operationId, else from its
// method and path, sanitized and cut to the longest name allowed.
func baseName(o *operation) string {
	name := invalidNameChars.ReplaceAllString(o.id, "_")
	if strings.Trim(name, "_") == "" {
		p := strings.NewReplacer("{", "", "}", "").Replace(o.path)
		name = strings.Trim(invalidNameChars.ReplaceAllString(strings.ToLower(o.method)+"/"+p, "_"), "_")
	}
	return truncate(name, mcpgate.MaxToolNameLen)
}

// uniqueName returns base, or base with the first free suffix _2, _3 ...,
// cut to fit, and marks it taken.
func uniqueName(base string, taken map[string]bool) string {
	name := base
	for i := 2; taken[name]; i++ {
		suffix := "_" + strconv.Itoa(i)
		name = truncate(base, mcpgate.MaxToolNameLen-len(suffix)) + suffix
	}
	taken[name] = true
	return name
}

// truncate cuts an ASCII string to at most n bytes.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
