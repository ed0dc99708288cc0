package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema (2020-12 unless the schema's $schema
// says otherwise), safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema
	// anyObject is set for a schema that every JSON object satisfies and
	// nothing else (see acceptsAnyObject): the input schema of most tools
	// without parameters.
	anyObject bool
}

// noLoader refuses every $ref outside the schema itself: a tool's schema
// must never make the gateway read files or fetch URLs.
type noLoader struct{}

// Load refuses to load url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed; put definitions in $defs", url)
}

// CompileSchema compiles raw, a JSON Schema object. Returns EINVALID saying
// what is wrong with it.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "schema is not valid JSON: %v", err)
	}
	const loc = "mcpgate:///schema.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "schema: %v", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "schema does not compile: %s", compactError(err))
	}
	return &Schema{s: s, anyObject: acceptsAnyObject(doc)}, nil
}

// acceptsAnyObject reports whether doc, a decoded schema, asks only that
// an instance be an object: "type": "object", and otherwise nothing but
// annotations, no properties, nothing required, and additional properties
// allowed.
func acceptsAnyObject(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok || m["type"] != "object" {
		return false
	}
	for k, v := range m {
		switch k {
		case "type", "$schema", "$id", "$comment", "title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly":
		case "properties", "patternProperties", "$defs", "definitions":
			if o, ok := v.(map[string]any); !ok || len(o) > 0 {
				return false
			}
		case "required":
			if a, ok := v.([]any); !ok || len(a) > 0 {
				return false
			}
		case "additionalProperties", "unevaluatedProperties":
			if v == true {
				continue
			}
			if o, ok := v.(map[string]any); !ok || len(o) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// compactError keeps a compile error on one line.
func compactError(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Validate checks a JSON document against the schema. On failure it
// returns EINVALID whose message names each bad field and why, one per
// line, like "/rows/0/quantity: got string, want number".
func (s *Schema) Validate(doc json.RawMessage) error {
	_, err := s.Decode(doc)
	return err
}

// Decode is Validate that also returns the document as it decoded it
// (objects as map[string]any, numbers as json.Number), so that a caller
// need not decode it again; the value is nil when the document is not
// JSON.
func (s *Schema) Decode(doc json.RawMessage) (any, error) {
	v, ok := decodeValue(doc)
	if !ok { // not JSON: the library's decoder words the error
		var err error
		if v, err = jsonschema.UnmarshalJSON(bytes.NewReader(doc)); err != nil {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "not valid JSON: %v", err)
		}
	}
	return v, s.ValidateValue(v)
}

// ValidateValue is Validate for a value already decoded with UseNumber.
// An object needs no more than its type checked against a schema that
// accepts any object; anything else gets the library's words.
func (s *Schema) ValidateValue(v any) error {
	if _, ok := v.(map[string]any); ok && s.anyObject {
		return nil
	}
	err := s.s.Validate(v)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	} else if !errors.As(err, &ve) {
		return mcpgate.Errorf(mcpgate.EINVALID, "%v", err)
	}
	return mcpgate.Errorf(mcpgate.EINVALID, "%s", strings.Join(problems(ve), "\n"))
}

// problems lists the leaf errors of a validation failure, each with the
// location of the offending value.
func problems(ve *jsonschema.ValidationError) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") || strings.Contains(msg, "doesn't validate with") {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "(arguments)"
		}
		line := loc + ": " + msg
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		out = append(out, compactError(ve))
	}
	sort.Strings(out)
	return out
}

// SchemaChecker compiles tools' schemas, each distinct text once: shared
// schemas repeat the same one, and compiling is the costly part of a
// check. The zero value is ready; it is not safe for concurrent use.
type SchemaChecker struct {
	done map[string]error
}

// CheckSkill returns a problem for each schema of s's tools that does not
// compile, with fields relative to the skill.
func (c *SchemaChecker) CheckSkill(s *mcpgate.Skill) mcpgate.Problems {
	var p mcpgate.Problems
	for i, t := range s.Tools {
		for _, f := range []struct {
			name string
			raw  json.RawMessage
		}{{"input_schema", t.InputSchema}, {"output_schema", t.OutputSchema}} {
			if !bytes.HasPrefix(bytes.TrimSpace(f.raw), []byte("{")) {
				continue // not an object schema: the skill's own check says so
			}
			if err := c.compile(f.raw); err != nil {
				p.Addf(fmt.Sprintf("tools[%d].%s", i, f.name), "%s", mcpgate.ErrorMessage(err))
			}
		}
	}
	return p
}

// compile compiles raw, or returns what compiling it gave before.
func (c *SchemaChecker) compile(raw json.RawMessage) error {
	if err, done := c.done[string(raw)]; done {
		return err
	}
	if c.done == nil {
		c.done = map[string]error{}
	}
	_, err := CompileSchema(raw)
	c.done[string(raw)] = err
	return err
}
