package openapi

import (
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// addBody adds the operation's JSON request body: an object's properties
// as arguments of their own when none clashes with a parameter's, else
// the whole body as one argument. A body that is not JSON is left out when
// it is optional and makes the operation fail when it is required.
func (b *toolBuilder) addBody() error {
	raw := b.op.op["requestBody"]
	if raw == nil {
		b.noBody()
		return nil
	}
	rb, err := b.doc.resolveObject(raw, "requestBody")
	if err != nil {
		return err
	}
	required, _ := rb["required"].(bool)
	content := object(rb["content"])
	mediaType, media := chooseMedia(content)
	if !isJSON(mediaType) {
		if required && len(content) > 0 {
			return fmt.Errorf("the request body (%s) is not JSON, which is not supported", strings.Join(sortedKeys(content), ", "))
		}
		b.noBody()
		return nil
	}
	if base, _, _ := mime.ParseMediaType(mediaType); base != "application/json" {
		b.req.Headers = setValue(b.req.Headers, "Content-Type", mediaType)
	}
	schema := object(media)["schema"]
	if merged, err := b.mergeBody(schema, required); merged || err != nil {
		return err
	}
	return b.wholeBody(schema, required, stringField(rb, "description"))
}

// noBody sends no body, even for methods that send one by default.
func (b *toolBuilder) noBody() {
	switch b.op.method {
	case "GET", "HEAD", "DELETE", "OPTIONS":
	default:
		b.req.Body = &mcpgate.RequestBody{Mode: mcpgate.BodyNone}
	}
}

// mergeBody adds an object body's properties as arguments, and sends them
// as the body's fields, unless the body is not a plain object or one of
// its properties is named like a parameter's argument. A required body
// keeps its required properties required.
func (b *toolBuilder) mergeBody(schema any, required bool) (bool, error) {
	resolved, err := b.doc.resolve(schema)
	if err != nil {
		return false, err
	}
	m := object(resolved)
	if !mergeable(m) {
		return false, nil
	}
	props := object(m["properties"])
	fields := sortedKeys(props)
	for _, name := range fields {
		if b.taken[name] || name == "" {
			return false, nil
		}
	}
	needed, _ := m["required"].([]any)
	for _, name := range fields {
		if err := b.addArgument(name, props[name], "", required && slices.Contains(needed, any(name))); err != nil {
			return false, err
		}
	}
	b.req.Body = &mcpgate.RequestBody{Mode: mcpgate.BodyFields, Fields: fields}
	return true, nil
}

// mergeable reports whether a body schema is an object with properties
// and nothing that fields alone cannot send.
func mergeable(m map[string]any) bool {
	if m == nil || len(object(m["properties"])) == 0 {
		return false
	}
	if t, ok := m["type"]; ok && t != "object" {
		return false
	}
	if ap, ok := m["additionalProperties"]; ok && ap != false {
		return false
	}
	nullable, _ := m["nullable"].(bool)
	return !nullable && !hasAny(m, "allOf", "anyOf", "oneOf", "not", "if", "patternProperties", "unevaluatedProperties")
}

// wholeBody adds the body as one argument, "body" unless a parameter
// already took that name, which is the request's whole JSON body.
func (b *toolBuilder) wholeBody(schema any, required bool, description string) error {
	name := "body"
	if b.taken[name] {
		name = b.unused("request_body")
	}
	if err := b.addArgument(name, schema, description, required); err != nil {
		return err
	}
	tpl, _ := json.Marshal("{" + name + "}") // a string always encodes
	b.req.Body = &mcpgate.RequestBody{Mode: mcpgate.BodyTemplate, Template: tpl}
	return nil
}

// chooseMedia picks a JSON media type from a content map: application/json
// first, then any other JSON type, in order; else the first type.
func chooseMedia(content map[string]any) (string, any) {
	keys := sortedKeys(content)
	for _, k := range keys {
		if base, _, _ := mime.ParseMediaType(k); base == "application/json" {
			return k, content[k]
		}
	}
	for _, k := range keys {
		if isJSON(k) {
			return k, content[k]
		}
	}
	if len(keys) > 0 {
		return keys[0], content[keys[0]]
	}
	return "", nil
}

// isJSON reports whether a media type is JSON: application/json or a
// +json type such as application/vnd.api+json.
func isJSON(mediaType string) bool {
	base, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return false
	}
	return base == "application/json" || strings.HasSuffix(base, "+json") || base == "text/json"
}
