package openapi

import (
	"encoding/json"
	"regexp"

	"github.com/mcpgate/mcpgate/registry"
)

// success matches a 2xx status code or range in a responses map.
var success = regexp.MustCompile(`^2[0-9Xx]{2}$`)

// outputSchema returns the JSON schema of the operation's success response
// (200, 201, then any other 2xx, then default) when it describes an object,
// else nil.
func outputSchema(doc *Document, op map[string]any) json.RawMessage {
	responses := object(op["responses"])
	code := successCode(responses)
	if code == "" {
		return nil
	}
	resp, err := doc.resolveObject(responses[code], "response")
	if err != nil {
		return nil
	}
	mediaType, media := chooseMedia(object(resp["content"]))
	if !isJSON(mediaType) {
		return nil
	}
	raw, err := doc.resolve(object(media)["schema"])
	if err != nil || raw == nil {
		return nil
	}
	return objectSchema(doc, raw)
}

// objectSchema converts a schema whose top is an object, with its $defs,
// and returns nil for any other schema or one that does not compile.
func objectSchema(doc *Document, raw any) json.RawMessage {
	s := newSchemas(doc)
	c, err := s.convert(raw)
	root := object(c)
	if err != nil || root == nil {
		return nil
	}
	if root["type"] == nil && root["properties"] != nil {
		root["type"] = "object"
	}
	if root["type"] != "object" {
		return nil
	}
	if len(s.defs) > 0 {
		root["$defs"] = s.defs
	}
	data, err := marshal(root)
	if err != nil {
		return nil
	}
	if _, err := registry.CompileSchema(data); err != nil {
		return nil
	}
	return data
}

// successCode returns the responses key of the success response.
func successCode(responses map[string]any) string {
	for _, code := range []string{"200", "201"} {
		if _, ok := responses[code]; ok {
			return code
		}
	}
	for _, code := range sortedKeys(responses) {
		if success.MatchString(code) {
			return code
		}
	}
	if _, ok := responses["default"]; ok {
		return "default"
	}
	return ""
}
