package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/skilledit"
	"go.yaml.in/yaml/v3"
)

// decoder walks a config file's YAML nodes, collecting every problem with
// its line and field.
type decoder struct {
	file   string
	lookup mcpgate.LookupFunc
	errs   Errors
	// at is the node of each field read so far, by path: the key of a
	// mapping entry, or a mapping in a list; report finds lines in it.
	at map[string]*yaml.Node
	// mappings is the mapping node of each field read as one, by path: a
	// problem of the mapping as a whole is reported at its first line.
	mappings map[string]*yaml.Node
	// checker checks each skill as the API and the CLI do.
	checker *skilledit.Checker
}

// errorf records a problem of field at n's line.
func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or a YAML null.
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// fields is a YAML mapping's entries by key.
type fields struct {
	path string
	node *yaml.Node
	keys map[string]*yaml.Node
	vals map[string]*yaml.Node
}

// field returns the path of the entry key.
func (f *fields) field(key string) string {
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

// has reports whether the mapping sets key to something other than null.
func (f *fields) has(key string) bool { return !isNull(f.vals[key]) }

// fields reads n as a mapping whose keys must be among known. It returns
// nil, having recorded the problem, when n is not a mapping; unknown and
// repeated keys are recorded and skipped.
func (d *decoder) fields(n *yaml.Node, path string, known []string) *fields {
	n = resolve(n)
	f := &fields{path: path, node: n, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	if isNull(n) {
		return f
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping of %s", strings.Join(known, ", "))
		return nil
	}
	d.mark(path, n)
	if d.mappings == nil {
		d.mappings = map[string]*yaml.Node{}
	}
	d.mappings[path] = n
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			d.unknownField(k, f, known)
		case f.keys[k.Value] != nil:
			d.errorf(k, f.field(k.Value), "is set twice (first at line %d)", f.keys[k.Value].Line)
		default:
			f.keys[k.Value], f.vals[k.Value] = k, v
			d.mark(f.field(k.Value), k)
		}
	}
	return f
}

// unknownField records a key the mapping does not know.
func (d *decoder) unknownField(k *yaml.Node, f *fields, known []string) {
	if k.Value == "<<" {
		d.errorf(k, f.path, "YAML merge keys (<<) are not supported; write the fields out")
		return
	}
	msg := fmt.Sprintf("unknown field %q", k.Value)
	if s := suggest(k.Value, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += "; known fields: " + strings.Join(known, ", ")
	}
	d.errorf(k, f.path, "%s", msg)
}

// scalar returns the scalar at key, or nil when it is absent, null, or not
// a scalar (recorded).
func (d *decoder) scalar(f *fields, key, want string) *yaml.Node {
	if f == nil || !f.has(key) {
		return nil
	}
	n := resolve(f.vals[key])
	if n.Kind != yaml.ScalarNode {
		d.errorf(f.keys[key], f.field(key), "must be %s", want)
		return nil
	}
	return n
}

// str returns the text at key, "" when absent.
func (d *decoder) str(f *fields, key string) string {
	if n := d.scalar(f, key, "a string"); n != nil {
		return n.Value
	}
	return ""
}

// required returns the text at key, recording a problem when it is absent
// or empty.
func (d *decoder) required(f *fields, key, what string) string {
	if f == nil {
		return ""
	}
	if f.has(key) && resolve(f.vals[key]).Kind != yaml.ScalarNode {
		return d.str(f, key) // records that it is not a string
	}
	s := d.str(f, key)
	if s == "" {
		d.errorf(f.lineNode(key), f.field(key), "is required: %s", what)
	}
	return s
}

// lineNode returns the node to report a problem of key at: the key when
// present, else the mapping.
func (f *fields) lineNode(key string) *yaml.Node {
	if k := f.keys[key]; k != nil {
		return k
	}
	return f.node
}

// boolean returns the boolean at key, or def when absent.
func (d *decoder) boolean(f *fields, key string, def bool) bool {
	n := d.scalar(f, key, "true or false")
	if n == nil {
		return def
	}
	var v bool
	if n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.errorf(f.keys[key], f.field(key), "must be true or false, not %q", n.Value)
		return def
	}
	return v
}

// duration returns the positive duration at key, 0 when absent.
func (d *decoder) duration(f *fields, key string) mcpgate.Duration {
	n := d.scalar(f, key, "a duration such as 30s or 5m")
	if n == nil {
		return 0
	}
	var v mcpgate.Duration
	if err := v.UnmarshalText([]byte(n.Value)); err != nil {
		d.errorf(f.keys[key], f.field(key), "%v", err)
		return 0
	}
	if v == 0 {
		d.errorf(f.keys[key], f.field(key), "must be positive, such as 30s; leave it out for the default")
	}
	return v
}

// positiveInt returns the positive integer at key, 0 when absent.
func (d *decoder) positiveInt(f *fields, key string) int64 {
	n := d.scalar(f, key, "a positive integer")
	if n == nil {
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if n.ShortTag() != "!!int" || err != nil || v <= 0 {
		d.errorf(f.keys[key], f.field(key), "must be a positive integer, not %q", n.Value)
		return 0
	}
	return v
}

// seq returns the items of the sequence at key, nil when absent.
func (d *decoder) seq(f *fields, key string) []*yaml.Node {
	if f == nil || !f.has(key) {
		return nil
	}
	n := resolve(f.vals[key])
	if n.Kind != yaml.SequenceNode {
		d.errorf(f.keys[key], f.field(key), "must be a list")
		return nil
	}
	return n.Content
}

// stringList returns the list of text values at key (empty ones
// included), nil when absent.
func (d *decoder) stringList(f *fields, key string) []string {
	var out []string
	for i, n := range d.seq(f, key) {
		n = resolve(n)
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, fmt.Sprintf("%s[%d]", f.field(key), i), "must be a string")
			return nil
		}
		out = append(out, n.Value)
	}
	return out
}

// stringMap returns the mapping of text values at key, nil when absent,
// and the key node of each entry.
func (d *decoder) stringMap(f *fields, key string) (map[string]string, map[string]*yaml.Node) {
	if f == nil || !f.has(key) {
		return nil, nil
	}
	n := resolve(f.vals[key])
	if n.Kind != yaml.MappingNode {
		d.errorf(f.keys[key], f.field(key), "must be a mapping of names to text values")
		return nil, nil
	}
	m := make(map[string]string, len(n.Content)/2)
	at := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		field := f.field(key) + "." + k.Value
		if _, dup := m[k.Value]; dup {
			d.errorf(k, field, "is set twice")
		} else if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
			d.errorf(k, field, "must be a text value")
		} else {
			m[k.Value], at[k.Value] = v.Value, k
			d.mark(field, k)
		}
	}
	return m, at
}

// mark records n as the node of field, unless one is recorded already (a
// mapping's key comes before the mapping).
func (d *decoder) mark(field string, n *yaml.Node) {
	if d.at == nil {
		d.at = map[string]*yaml.Node{}
	}
	if _, ok := d.at[field]; !ok {
		d.at[field] = n
	}
}

// node returns the node of field: the mapping it holds, when it was read
// as one, else its key, else the node of the nearest field holding it
// that was read (the mapping, for a field left out).
func (d *decoder) node(field string) *yaml.Node {
	if n := d.mappings[field]; n != nil {
		return n
	}
	for {
		if n := d.at[field]; n != nil || field == "" {
			return n
		}
		field = field[:max(strings.LastIndexAny(field, ".["), 0)]
	}
}

// report records each of problems, whose fields are relative to under,
// at its line, except those about a field that a problem recorded since
// the since-th (the reader's own, such as "must be a string") is about
// already, or one inside or around it.
func (d *decoder) report(under string, problems mcpgate.Problems, since int) {
	before := d.errs[since:len(d.errs):len(d.errs)]
	for _, p := range problems {
		field := mcpgate.JoinField(under, p.Field)
		if !reported(before, field) {
			d.errs = append(d.errs, &Error{File: d.file, Line: lineOf(d.node(field)), Field: field, Msg: p.Msg})
		}
	}
}

// reported reports whether one of errs is about field, a field inside it
// or one holding it.
func reported(errs Errors, field string) bool {
	for _, e := range errs {
		if e.Field == field || within(field, e.Field) || within(e.Field, field) {
			return true
		}
	}
	return false
}

// within reports whether field is a field inside outer.
func within(field, outer string) bool {
	return strings.HasPrefix(field, outer+".") || strings.HasPrefix(field, outer+"[")
}

// lineOf returns n's line, 0 for none.
func lineOf(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}
