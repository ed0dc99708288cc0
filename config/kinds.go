package config

import "github.com/mcpgate/mcpgate"

// kindFields are the skill fields only the file has that belong to one kind
// of skill, with that kind; the domain's check refuses the others.
var kindFields = map[string]mcpgate.SkillKind{
	"openapi": mcpgate.SkillREST, "include": mcpgate.SkillREST, "exclude": mcpgate.SkillREST,
}

// kindSpecific reads the fields of every kind of skill, so that the
// skill's check can refuse those of another kind, and returns its tools:
// a rest skill's, declared or imported; an agent skill's declared ones
// (the registry adds its chat tool); none for an mcp skill, whose tools
// are discovered from the upstream.
func (d *decoder) kindSpecific(f *fields, s *mcpgate.Skill, imported *importedFields) []*toolAt {
	s.BaseURL = d.str(f, "base_url")
	s.URL, s.Command, s.Cwd = d.str(f, "url"), d.str(f, "command"), d.str(f, "cwd")
	s.Args = d.stringList(f, "args")
	s.Env, _ = d.stringMap(f, "env")
	s.Delivery = mcpgate.Delivery(d.str(f, "delivery"))
	s.PushURL, s.PushSecret = d.str(f, "push_url"), d.str(f, "push_secret")
	d.refuseOtherKinds(f, s.Kind)
	switch s.Kind {
	case mcpgate.SkillREST:
		return d.restSkill(f, s, imported)
	case mcpgate.SkillMCP:
		if f.has("tools") {
			d.errorf(f.keys["tools"], f.field("tools"), "the tools of an mcp skill are discovered from the upstream server; remove tools:")
		}
	case mcpgate.SkillAgent:
		return d.tools(f, s)
	}
	return nil
}

// restSkill reads a rest skill's tools, declared or imported.
func (d *decoder) restSkill(f *fields, s *mcpgate.Skill, imported *importedFields) []*toolAt {
	switch source := d.str(f, "openapi"); {
	case source != "":
		return d.openapiTools(f, s, source, imported)
	case f.has("include") || f.has("exclude"):
		key := "include"
		if !f.has(key) {
			key = "exclude"
		}
		d.errorf(f.keys[key], f.field(key), "include and exclude pick the operations of an openapi document; this skill has none")
		return nil
	}
	return d.tools(f, s)
}

// refuseOtherKinds reports the file's own fields that belong to a kind of
// skill other than this one's.
func (d *decoder) refuseOtherKinds(f *fields, kind mcpgate.SkillKind) {
	switch kind {
	case mcpgate.SkillREST, mcpgate.SkillMCP, mcpgate.SkillAgent:
	default:
		return
	}
	for _, key := range skillFields {
		if owner, ok := kindFields[key]; ok && owner != kind && f.keys[key] != nil {
			d.errorf(f.keys[key], f.field(key), "is a field of kind %s skills; this skill is kind %s", owner, kind)
		}
	}
}
