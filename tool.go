package mcpgate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// MaxToolNameLen is the longest tool name the gateway serves.
const MaxToolNameLen = 64

var toolNameChars = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// wholeArgument matches a body written as one argument: "{name}".
var wholeArgument = regexp.MustCompile(`^\{[A-Za-z_][A-Za-z0-9_.-]*\}$`)

// MCPTool is a tool in MCP's wire shape, as tools/list lists it: what the
// gateway serves, and what an upstream MCP server lists.
type MCPTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// Tool is one callable tool of a skill, with its backend binding.
type Tool struct {
	// Name is the tool's name within its skill; on the agent it is served
	// as the skill's prefix followed by Name.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema (2020-12 unless it says otherwise) whose
	// root is an object schema.
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Icons and Meta (MCP's _meta) are passed through to tools/list as
	// they are, for tools relayed from an upstream server.
	Icons json.RawMessage `json:"icons,omitempty"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
	// Upstream is the tool's name on the upstream MCP server, for skills of
	// kind mcp; Name is what the agent serves it as (within its skill).
	Upstream string `json:"upstream,omitempty"`
	// Request binds the tool to an HTTP request, for skills of kind rest.
	Request *Request `json:"request,omitempty"`
	// RateLimit, when set, gives the tool a budget of its own instead of
	// its skill's.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`
	// Approval overrides the skill's auto_approve for this tool:
	// ApprovalRequired or ApprovalNever; empty follows the skill.
	Approval string `json:"approval,omitempty"`
}

// The values of Tool.Approval.
const (
	ApprovalRequired = "required"
	ApprovalNever    = "never"
)

// ExposedName returns the tool's name as an agent serves it.
func ExposedName(prefix, name string) string { return prefix + name }

// ValidToolName returns EINVALID unless name is 1 to 64 characters of
// letters, digits, '_', '.' or '-'.
func ValidToolName(name string) error {
	if name == "" || len(name) > MaxToolNameLen || !toolNameChars.MatchString(name) {
		return Errorf(EINVALID, "tool name %q: use 1 to %d letters, digits, '_', '.' or '-'", name, MaxToolNameLen)
	}
	return nil
}

// Validate checks the tool's name (with prefix), that its schemas are JSON
// objects, and that its input schema describes an object.
func (t *Tool) Validate(prefix string) error {
	if err := ValidToolName(ExposedName(prefix, t.Name)); err != nil {
		return err
	}
	if len(t.InputSchema) == 0 {
		return Errorf(EINVALID, "tool %q: input_schema is required", t.Name)
	}
	var in *struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(t.InputSchema, &in); err != nil || in == nil { // nil: the schema is null
		return Errorf(EINVALID, "tool %q: input_schema must be a JSON object", t.Name)
	}
	if in.Type != "object" {
		return Errorf(EINVALID, "tool %q: input_schema must have \"type\": \"object\"", t.Name)
	}
	if len(t.OutputSchema) > 0 && !rawIsObject(t.OutputSchema) {
		return Errorf(EINVALID, "tool %q: output_schema must be a JSON object", t.Name)
	}
	if len(t.Annotations) > 0 && !rawIsObject(t.Annotations) {
		return Errorf(EINVALID, "tool %q: annotations must be a JSON object", t.Name)
	}
	if t.RateLimit != nil {
		if err := t.RateLimit.Validate(); err != nil {
			return Errorf(EINVALID, "tool %q: %s", t.Name, ErrorMessage(err))
		}
	}
	return nil
}

// Request is a REST tool's HTTP request template. Path, query and header
// values name arguments as {name}; header values may also reference secrets
// as ${env:NAME}.
type Request struct {
	Method string `json:"method"`
	// Path is relative to the skill's base_url; URL, when set instead, is
	// absolute.
	Path    string            `json:"path,omitempty"`
	URL     string            `json:"url,omitempty"`
	Query   map[string]string `json:"query,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    *RequestBody      `json:"body,omitempty"`
	// Timeout overrides the skill's timeout for this tool.
	Timeout Duration `json:"timeout,omitempty"`
}

// Body modes of a REST request.
const (
	BodyAll      = "all"      // every argument not used in the path, query or headers
	BodyNone     = "none"     // no body
	BodyFields   = "fields"   // the named arguments only
	BodyTemplate = "template" // a JSON value with {name} placeholders
	// BodyMultipart sends multipart/form-data: the arguments not used in
	// the path, query or headers as form fields, and the call's
	// attachments' bytes as file parts named "file".
	BodyMultipart = "multipart"
)

// RequestBody says what a REST request sends as its body. In JSON and
// YAML it is written as "all", "none", "multipart", "{name}" (one
// argument's value is the whole body, such as an array), a list of
// argument names, or an object template whose strings may hold {name}
// placeholders.
type RequestBody struct {
	Mode     string
	Fields   []string
	Template json.RawMessage
}

// MarshalJSON writes the body in its short form.
func (b RequestBody) MarshalJSON() ([]byte, error) {
	switch b.Mode {
	case BodyFields:
		return json.Marshal(b.Fields)
	case BodyTemplate:
		return b.Template, nil
	default:
		return json.Marshal(b.Mode)
	}
}

// UnmarshalJSON reads any of the body's short forms.
func (b *RequestBody) UnmarshalJSON(data []byte) error {
	trimmed := strings.TrimSpace(string(data))
	switch {
	case strings.HasPrefix(trimmed, `"`):
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		switch {
		case s == BodyAll || s == BodyNone || s == BodyMultipart:
			*b = RequestBody{Mode: s}
		case wholeArgument.MatchString(s):
			*b = RequestBody{Mode: BodyTemplate, Template: append(json.RawMessage(nil), trimmed...)}
		default:
			return fmt.Errorf("body %q: use \"all\", \"none\", \"multipart\", \"{name}\" (one argument as the whole body), a list of argument names or an object template", s)
		}
	case strings.HasPrefix(trimmed, "["):
		var names []string
		if err := json.Unmarshal(data, &names); err != nil {
			return fmt.Errorf("body: a list must hold argument names")
		}
		*b = RequestBody{Mode: BodyFields, Fields: names}
	case strings.HasPrefix(trimmed, "{"):
		*b = RequestBody{Mode: BodyTemplate, Template: append(json.RawMessage(nil), trimmed...)}
	default:
		return fmt.Errorf("body: use \"all\", \"none\", a list of argument names or an object template")
	}
	return nil
}
