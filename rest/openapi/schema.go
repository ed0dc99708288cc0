package openapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Keywords whose values are schemas, maps of schemas or lists of schemas;
// every other keyword's value is data and is copied as it is.
var (
	subschemaKeys = map[string]bool{
		"additionalProperties": true, "not": true, "if": true, "then": true, "else": true,
		"contains": true, "propertyNames": true, "unevaluatedItems": true,
		"unevaluatedProperties": true, "contentSchema": true,
	}
	schemaMapKeys  = map[string]bool{"properties": true, "patternProperties": true, "dependentSchemas": true}
	schemaListKeys = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}
	// droppedKeys are OpenAPI-only keywords, and identifiers that would
	// change how references resolve once the schema moves into a tool.
	droppedKeys = map[string]bool{
		"discriminator": true, "xml": true, "externalDocs": true, "example": true, "nullable": true,
		"$id": true, "$schema": true, "$anchor": true, "$dynamicAnchor": true, "$vocabulary": true,
		"$defs": true, "definitions": true, "additionalItems": true,
	}
	jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}
)

// schemas converts the schemas of one tool schema to JSON Schema 2020-12
// and collects the schemas they refer to as the tool schema's $defs.
type schemas struct {
	doc *Document
	// names maps each reference met to its name in defs.
	names map[string]string
	defs  map[string]any
}

// newSchemas returns a converter for one tool schema.
func newSchemas(doc *Document) *schemas {
	return &schemas{doc: doc, names: map[string]string{}, defs: map[string]any{}}
}

// convert returns a converted copy of the schema v; v itself, part of the
// document, is never modified.
func (s *schemas) convert(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return map[string]any{}, nil
	case bool:
		return v, nil
	case map[string]any:
		return s.convertObject(v)
	}
	return nil, fmt.Errorf("a schema is a %T, not an object", v)
}

// convertObject converts an object schema.
func (s *schemas) convertObject(m map[string]any) (any, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if droppedKeys[k] || strings.HasPrefix(k, "x-") {
			continue
		}
		cv, err := s.keyword(k, v, m)
		if err != nil {
			return nil, err
		}
		if cv != nil {
			out[k] = cv
		}
	}
	if items, ok := m["items"].([]any); ok { // the draft 4 tuple form
		delete(out, "items")
		prefix, err := s.convertList(items)
		if err != nil {
			return nil, err
		}
		out["prefixItems"] = prefix
		if extra, ok := m["additionalItems"]; ok {
			if out["items"], err = s.convert(extra); err != nil {
				return nil, err
			}
		}
	}
	return dialect(m, out), nil
}

// keyword converts one keyword's value; nil leaves the keyword out.
func (s *schemas) keyword(k string, v any, m map[string]any) (any, error) {
	switch {
	case k == "$ref":
		ref, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("$ref is not a string")
		}
		name, err := s.def(ref)
		return "#/$defs/" + name, err
	case k == "items":
		if _, isList := v.([]any); isList {
			return nil, nil // converted by the caller
		}
		return s.convert(v)
	case subschemaKeys[k]:
		return s.convert(v)
	case schemaMapKeys[k]:
		return s.convertMap(v, k)
	case schemaListKeys[k]:
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s is not a list", k)
		}
		return s.convertList(list)
	}
	return v, nil
}

// convertMap converts a map of schemas, such as properties.
func (s *schemas) convertMap(v any, key string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", key)
	}
	out := make(map[string]any, len(m))
	for k, sub := range m {
		c, err := s.convert(sub)
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	return out, nil
}

// convertList converts a list of schemas, such as allOf.
func (s *schemas) convertList(list []any) ([]any, error) {
	out := make([]any, 0, len(list))
	for _, sub := range list {
		c, err := s.convert(sub)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// def returns the $defs name of the schema ref points to, converting it
// the first time. A reference is named before its schema is converted, so
// a schema that refers to itself ends the recursion.
func (s *schemas) def(ref string) (string, error) {
	if name, ok := s.names[ref]; ok {
		return name, nil
	}
	target, err := s.doc.lookup(ref)
	if err != nil {
		return "", err
	}
	name := s.newName(ref)
	s.names[ref] = name
	s.defs[name] = true // taken while it converts
	c, err := s.convert(target)
	if err != nil {
		return "", err
	}
	s.defs[name] = c
	return name, nil
}

// newName names a reference in $defs: a component schema by its own name,
// anything else by its pointer, holding only what a tool name may, so that
// it needs no escaping in a JSON pointer or a URI fragment; _2, _3 ...
// keep names unique.
func (s *schemas) newName(ref string) string {
	const components = "#/components/schemas/"
	base := strings.TrimPrefix(ref, "#/")
	if rest, ok := strings.CutPrefix(ref, components); ok && !strings.Contains(rest, "/") {
		base = rest
	}
	base = strings.Trim(invalidNameChars.ReplaceAllString(base, "_"), "_")
	if base == "" {
		base = "schema"
	}
	name := base
	for i := 2; s.defs[name] != nil; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}

// dialect rewrites what OpenAPI 3.0 says differently from JSON Schema
// 2020-12, given the original schema m and its converted copy out:
// nullable, boolean exclusive bounds, example, and malformed type or
// required values.
func dialect(m, out map[string]any) any {
	exclusiveBound(out, "exclusiveMinimum", "minimum")
	exclusiveBound(out, "exclusiveMaximum", "maximum")
	if ex, ok := m["example"]; ok && out["examples"] == nil {
		out["examples"] = []any{ex}
	}
	if _, ok := out["examples"].([]any); !ok {
		delete(out, "examples")
	}
	cleanType(out)
	cleanRequired(out)
	if nullable, _ := m["nullable"].(bool); nullable {
		return addNull(out)
	}
	return out
}

// exclusiveBound turns a boolean exclusive bound into the numeric form.
func exclusiveBound(out map[string]any, exclusive, bound string) {
	b, ok := out[exclusive].(bool)
	if !ok {
		return
	}
	delete(out, exclusive)
	if v, has := out[bound]; b && has {
		out[exclusive] = v
		delete(out, bound)
	}
}

// cleanType keeps only the JSON Schema type names of type.
func cleanType(out map[string]any) {
	switch t := out["type"].(type) {
	case nil:
	case string:
		if !slices.Contains(jsonTypes, t) {
			delete(out, "type")
		}
	case []any:
		var keep []any
		for _, e := range t {
			if s, ok := e.(string); ok && slices.Contains(jsonTypes, s) && !slices.Contains(keep, e) {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			delete(out, "type")
		} else {
			out["type"] = keep
		}
	default:
		delete(out, "type")
	}
}

// cleanRequired drops a required that is not a list of names.
func cleanRequired(out map[string]any) {
	r, ok := out["required"]
	if !ok {
		return
	}
	list, ok := r.([]any)
	if !ok {
		delete(out, "required")
		return
	}
	for _, e := range list {
		if _, ok := e.(string); !ok {
			delete(out, "required")
			return
		}
	}
}

// addNull makes a schema accept null, as OpenAPI 3.0's nullable does.
func addNull(out map[string]any) any {
	if enum, ok := out["enum"].([]any); ok && !slices.Contains(enum, nil) {
		out["enum"] = append(slices.Clip(enum), nil) // never write into the document's list
	}
	switch t := out["type"].(type) {
	case string:
		if t != "null" {
			out["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, "null") {
			out["type"] = append(slices.Clip(t), "null")
		}
	default:
		if hasAny(out, "$ref", "allOf", "anyOf", "oneOf") {
			return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, out}}
		}
	}
	return out
}

// hasAny reports whether m has one of the keys.
func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}
