package config

import (
	"fmt"
	"regexp"

	"github.com/mcpgate/mcpgate"
	"go.yaml.in/yaml/v3"
)

// onlyREST is what every refusal of a later kind of skill says.
const onlyREST = "this version serves only kind rest skills, with declared or imported (openapi) tools"

// laterFields are the skill fields of features this version does not
// serve, with what they are for. They are refused, never ignored.
var laterFields = map[string]string{
	"url":      "upstream MCP servers (kind mcp)",
	"command":  "upstream MCP servers (kind mcp)",
	"args":     "upstream MCP servers (kind mcp)",
	"env":      "upstream MCP servers (kind mcp)",
	"dir":      "upstream MCP servers (kind mcp)",
	"delivery": "agent skills (kind agent)",
	"push_url": "agent skills (kind agent)",
}

// skillFields are the fields of an entry under skills.
var skillFields = []string{
	"name", "kind", "prefix", "base_url", "allow_private", "headers", "timeout", "auto_approve",
	"approval_timeout", "max_response_bytes", "tools", "openapi", "include", "exclude",
	"url", "command", "args", "env", "dir", "delivery", "push_url",
}

// skills reads an agent's skills and where each tool is declared.
func (d *decoder) skills(af *fields, agentID string) ([]*mcpgate.Skill, []*toolAt) {
	var out []*mcpgate.Skill
	var tools []*toolAt
	firstLine := map[string]int{}
	for i, n := range d.seq(af, "skills") {
		f := d.fields(n, fmt.Sprintf("%s[%d]", af.field("skills"), i), skillFields)
		if f == nil {
			continue
		}
		s, ts := d.skill(f, agentID)
		if line, dup := firstLine[s.Name]; dup && s.Name != "" {
			d.errorf(f.lineNode("name"), f.field("name"), "skill %q is declared twice on this agent (first at line %d)", s.Name, line)
		} else {
			firstLine[s.Name] = f.lineNode("name").Line
		}
		out = append(out, s)
		tools = append(tools, ts...)
	}
	return out, tools
}

// skill reads one skill with its tools.
func (d *decoder) skill(f *fields, agentID string) (*mcpgate.Skill, []*toolAt) {
	before := len(d.errs)
	s := &mcpgate.Skill{
		AgentID:          agentID,
		Name:             d.required(f, "name", "the skill's name"),
		Kind:             mcpgate.SkillREST,
		Prefix:           d.str(f, "prefix"),
		BaseURL:          d.str(f, "base_url"),
		AllowPrivate:     d.boolean(f, "allow_private", false),
		Timeout:          d.duration(f, "timeout"),
		AutoApprove:      d.boolean(f, "auto_approve", true),
		ApprovalTimeout:  d.duration(f, "approval_timeout"),
		MaxResponseBytes: d.responseLimit(f),
		Source:           mcpgate.SourceConfig,
	}
	if s.Name != "" {
		if err := (&mcpgate.Skill{Name: s.Name, Kind: mcpgate.SkillREST}).Validate(); err != nil {
			d.errorf(f.lineNode("name"), f.field("name"), "%s", mcpgate.ErrorMessage(err))
		}
	}
	isREST := d.kind(f)
	served := !d.refuseLaterFields(f) && isREST
	if s.Prefix != "" && !prefixPattern.MatchString(s.Prefix) {
		d.errorf(f.keys["prefix"], f.field("prefix"), "%q may only hold letters, digits, '_', '.' or '-'", s.Prefix)
	}
	if !s.AutoApprove {
		d.errorf(f.keys["auto_approve"], f.field("auto_approve"),
			"the approval gate is not available in this version; remove auto_approve: false")
	}
	var at map[string]*yaml.Node
	s.Headers, at = d.stringMap(f, "headers")
	d.checkHeaders(f.field("headers"), s.Headers, at)
	if s.BaseURL != "" {
		d.checkURL(f, "base_url", s.BaseURL, s.AllowPrivate)
	}
	var tools []*toolAt
	switch source := d.str(f, "openapi"); {
	case source != "" && served:
		tools = d.openapiTools(f, s, source)
	case f.has("include") || f.has("exclude"):
		key := "include"
		if !f.has(key) {
			key = "exclude"
		}
		d.errorf(f.keys[key], f.field(key), "include and exclude pick the operations of an openapi document; this skill has none")
	default:
		tools = d.tools(f, s, served)
	}
	if len(d.errs) == before {
		if err := s.Validate(); err != nil {
			d.errorf(f.node, f.path, "%s", mcpgate.ErrorMessage(err))
		}
	}
	return s, tools
}

// maxResponseBytes caps max_response_bytes: a response is held in memory
// whole while it becomes a result.
const maxResponseBytes = 64 << 20

// responseLimit reads max_response_bytes, 0 when absent.
func (d *decoder) responseLimit(f *fields) int64 {
	v := d.positiveInt(f, "max_response_bytes")
	if v > maxResponseBytes {
		d.errorf(f.keys["max_response_bytes"], f.field("max_response_bytes"),
			"%d is more than the limit of %d (64 MiB)", v, maxResponseBytes)
		return 0
	}
	return v
}

// kind checks a skill's kind and reports whether it is rest, the only
// kind this version serves.
func (d *decoder) kind(f *fields) bool {
	k := mcpgate.SkillKind(d.required(f, "kind", "rest ("+onlyREST+")"))
	switch k {
	case mcpgate.SkillREST:
		return true
	case mcpgate.SkillMCP, mcpgate.SkillAgent:
		d.errorf(f.keys["kind"], f.field("kind"), "kind %q is not available in this version; %s", k, onlyREST)
	case "":
	default:
		d.errorf(f.keys["kind"], f.field("kind"), "kind %q is not one of rest, mcp, agent", k)
	}
	return false
}

// refuseLaterFields reports the fields of features this version does not
// serve, and returns whether there were any.
func (d *decoder) refuseLaterFields(f *fields) bool {
	found := false
	for _, key := range skillFields {
		if what, later := laterFields[key]; later && f.keys[key] != nil {
			d.errorf(f.keys[key], f.field(key), "%s is not available in this version; %s", what, onlyREST)
			found = true
		}
	}
	return found
}

// prefixPattern is what a skill's tool name prefix may hold.
var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// tools reads a skill's tools. A rest skill, when served is set, needs at
// least one; otherwise the kind or fields were refused already.
func (d *decoder) tools(f *fields, s *mcpgate.Skill, served bool) []*toolAt {
	items := d.seq(f, "tools")
	if served && len(items) == 0 && (!f.has("tools") || resolve(f.vals["tools"]).Kind == yaml.SequenceNode) {
		d.errorf(f.lineNode("tools"), f.field("tools"), "a rest skill needs at least one tool; %s", onlyREST)
	}
	var out []*toolAt
	firstLine := map[string]int{}
	for i, n := range items {
		tf := d.fields(n, fmt.Sprintf("%s[%d]", f.field("tools"), i), toolFields)
		if tf == nil {
			continue
		}
		t := d.tool(tf, s)
		if line, dup := firstLine[t.Name]; dup && t.Name != "" {
			d.errorf(tf.lineNode("name"), tf.field("name"), "tool %q is declared twice in this skill (first at line %d)", t.Name, line)
		} else {
			firstLine[t.Name] = tf.lineNode("name").Line
		}
		s.Tools = append(s.Tools, t)
		out = append(out, &toolAt{skill: s, tool: t, at: tf})
	}
	return out
}
