package config

import (
	"fmt"
	"regexp"

	"github.com/mcpgate/mcpgate"
	"go.yaml.in/yaml/v3"
)

// kindFields are the skill fields that belong to one kind of skill, with
// that kind; a field of another kind is refused, never ignored.
var kindFields = map[string]mcpgate.SkillKind{
	"base_url": mcpgate.SkillREST, "openapi": mcpgate.SkillREST, "include": mcpgate.SkillREST, "exclude": mcpgate.SkillREST,
	"url": mcpgate.SkillMCP, "command": mcpgate.SkillMCP, "args": mcpgate.SkillMCP, "env": mcpgate.SkillMCP, "cwd": mcpgate.SkillMCP,
	"delivery": mcpgate.SkillAgent, "push_url": mcpgate.SkillAgent, "push_secret": mcpgate.SkillAgent,
}

// skillFields are the fields of an entry under skills.
var skillFields = []string{
	"name", "kind", "prefix", "base_url", "allow_private", "headers", "timeout", "auto_approve",
	"approval_timeout", "max_response_bytes", "tools", "openapi", "include", "exclude",
	"url", "command", "args", "env", "cwd", "delivery", "push_url", "push_secret", "rate_limit",
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
		Prefix:           d.str(f, "prefix"),
		BaseURL:          d.str(f, "base_url"),
		AllowPrivate:     d.boolean(f, "allow_private", false),
		Timeout:          d.duration(f, "timeout"),
		AutoApprove:      d.boolean(f, "auto_approve", true),
		ApprovalTimeout:  d.duration(f, "approval_timeout"),
		MaxResponseBytes: d.responseLimit(f),
		RateLimit:        d.rateLimit(f),
		Source:           mcpgate.SourceConfig,
	}
	if s.Name != "" {
		if err := (&mcpgate.Skill{Name: s.Name, Kind: mcpgate.SkillREST}).Validate(); err != nil {
			d.errorf(f.lineNode("name"), f.field("name"), "%s", mcpgate.ErrorMessage(err))
		}
	}
	s.Kind = d.kind(f)
	d.refuseOtherKinds(f, s.Kind)
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
	var tools []*toolAt
	switch s.Kind {
	case mcpgate.SkillREST:
		tools = d.restSkill(f, s)
	case mcpgate.SkillMCP:
		d.mcpSkill(f, s)
	case mcpgate.SkillAgent:
		tools = d.agentSkill(f, s)
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

// kind reads a skill's kind; "" when it is missing or unknown.
func (d *decoder) kind(f *fields) mcpgate.SkillKind {
	k := mcpgate.SkillKind(d.required(f, "kind", "rest, mcp or agent"))
	switch k {
	case mcpgate.SkillREST, mcpgate.SkillMCP, mcpgate.SkillAgent, "":
		return k
	}
	d.errorf(f.keys["kind"], f.field("kind"), "kind %q is not one of rest, mcp, agent", k)
	return ""
}

// refuseOtherKinds reports the fields that belong to a kind of skill other
// than this one's.
func (d *decoder) refuseOtherKinds(f *fields, kind mcpgate.SkillKind) {
	if kind == "" {
		return
	}
	for _, key := range skillFields {
		if owner, ok := kindFields[key]; ok && owner != kind && f.keys[key] != nil {
			d.errorf(f.keys[key], f.field(key), "is a field of kind %s skills; this skill is kind %s", owner, kind)
		}
	}
}

// prefixPattern is what a skill's tool name prefix may hold.
var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// tools reads a skill's declared tools; a rest skill needs at least one.
func (d *decoder) tools(f *fields, s *mcpgate.Skill) []*toolAt {
	items := d.seq(f, "tools")
	if s.Kind == mcpgate.SkillREST && len(items) == 0 && (!f.has("tools") || resolve(f.vals["tools"]).Kind == yaml.SequenceNode) {
		d.errorf(f.lineNode("tools"), f.field("tools"), "a rest skill needs at least one tool, declared under tools: or imported with openapi:")
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
