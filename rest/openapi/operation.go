package openapi

import (
	"fmt"
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

// operation is one operation of the document, with its tool's name, or a
// malformed operation or path item with what is wrong with it.
type operation struct {
	method string // upper case; "" for a malformed path item
	path   string
	id     string // operationId, or ""
	name   string // the tool's name, unique in the document
	item   map[string]any
	op     map[string]any
	// bad says why the operation (or path item) cannot be read; the
	// fields above it are then only method and path.
	bad error
}

// label names the operation in Skipped: "METHOD /path", or "/path" for a
// malformed path item.
func (o *operation) label() string {
	if o.method == "" {
		return o.path
	}
	return o.method + " " + o.path
}

// pointer is the JSON pointer to the operation (or path item) in the
// document.
func (o *operation) pointer() string {
	ptr := "/paths/" + pointerToken(o.path)
	if o.method != "" {
		ptr += "/" + strings.ToLower(o.method)
	}
	return ptr
}

// operations lists the document's operations sorted by path, then method,
// each with a unique tool name: later ones that would share a name get _2,
// _3 and so on. A path item that cannot be resolved, and an operation that
// is not an object, are listed with what is wrong with them.
func (d *Document) operations() []*operation {
	paths := object(d.root["paths"])
	var ops []*operation
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, err := d.resolveObject(paths[p], "the path item")
		if err != nil {
			ops = append(ops, &operation{path: p, bad: err})
			continue
		}
		for _, m := range methods {
			if v, ok := item[m]; ok {
				ops = append(ops, newOperation(strings.ToUpper(m), p, item, v))
			}
		}
	}
	taken := map[string]bool{}
	for _, o := range ops {
		if o.bad == nil {
			o.name = uniqueName(baseName(o), taken)
		}
	}
	return ops
}

// newOperation returns the operation v of a path item, or a malformed one
// when v is not an object.
func newOperation(method, path string, item map[string]any, v any) *operation {
	op, ok := v.(map[string]any)
	if !ok {
		return &operation{method: method, path: path, bad: fmt.Errorf("the operation is %s, not an object", jsonType(v))}
	}
	id, _ := op["operationId"].(string)
	return &operation{method: method, path: path, id: id, item: item, op: op}
}

// jsonType names the JSON type of a decoded value, with an article.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	}
	return "a number"
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
