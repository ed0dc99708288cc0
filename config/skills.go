package config

import (
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// skillFields are the fields of an entry under skills.
var skillFields = []string{
	"name", "kind", "prefix", "base_url", "allow_private", "headers", "timeout", "auto_approve",
	"approval_timeout", "approvers", "approval", "max_response_bytes", "tools", "openapi", "include", "exclude",
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

// skill reads one skill with its tools into the domain type, then runs
// the skill's checks (skilledit.Checker), the same as the management API
// and the CLI run, and reports each problem at its line.
func (d *decoder) skill(f *fields, agentID string) (*mcpgate.Skill, []*toolAt) {
	before := len(d.errs)
	s := &mcpgate.Skill{
		AgentID:          agentID,
		Name:             d.str(f, "name"),
		Kind:             mcpgate.SkillKind(d.str(f, "kind")),
		Prefix:           d.str(f, "prefix"),
		AllowPrivate:     d.boolean(f, "allow_private", false),
		Timeout:          d.duration(f, "timeout"),
		AutoApprove:      d.boolean(f, "auto_approve", true),
		ApprovalTimeout:  d.duration(f, "approval_timeout"),
		Approvers:        d.stringList(f, "approvers"),
		Approval:         d.str(f, "approval"),
		MaxResponseBytes: d.positiveInt(f, "max_response_bytes"),
		RateLimit:        d.rateLimit(f),
		Source:           mcpgate.SourceConfig,
	}
	s.Headers, _ = d.stringMap(f, "headers")
	imported := &importedFields{}
	tools := d.kindSpecific(f, s, imported)
	problems := d.checker.Check(s)
	problems = append(problems, s.UnsetSecrets(d.lookup)...)
	d.report(f.path, imported.remap(problems), before)
	if s.Kind == mcpgate.SkillAgent && s.Delivery == "" {
		s.Delivery = mcpgate.DeliveryPull
	}
	return s, tools
}
