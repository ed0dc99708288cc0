package openapi

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// maxRefHops bounds a chain of references to references.
const maxRefHops = 32

// lookup returns the value a local reference such as
// "#/components/schemas/Pet" points to. A reference into another document
// is an error, as is one that points nowhere.
func (d *Document) lookup(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("external $ref %q is not supported", ref)
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, fmt.Errorf("$ref %q is malformed", ref)
	}
	if frag == "" {
		return d.root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, fmt.Errorf("$ref %q is not a JSON pointer", ref)
	}
	var cur any = d.root
	for tok := range strings.SplitSeq(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		next, ok := step(cur, tok)
		if !ok {
			return nil, fmt.Errorf("$ref %q points nowhere", ref)
		}
		cur = next
	}
	return cur, nil
}

// step follows one token of a JSON pointer.
func step(cur any, tok string) (any, bool) {
	switch c := cur.(type) {
	case map[string]any:
		v, ok := c[tok]
		return v, ok
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// resolve follows v's $ref, and the target's, until it reaches a value
// without one. Values that are not objects with a string $ref are returned
// as they are.
func (d *Document) resolve(v any) (any, error) {
	for range maxRefHops {
		ref, ok := object(v)["$ref"].(string)
		if !ok {
			return v, nil
		}
		target, err := d.lookup(ref)
		if err != nil {
			return nil, err
		}
		v = target
	}
	return nil, fmt.Errorf("$ref chain is longer than %d or loops", maxRefHops)
}

// resolveObject is resolve for a value that must be an object; what names
// it in the error.
func (d *Document) resolveObject(v any, what string) (map[string]any, error) {
	r, err := d.resolve(v)
	if err != nil {
		return nil, err
	}
	m, ok := r.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not an object", what, jsonType(r))
	}
	return m, nil
}
