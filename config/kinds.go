package config

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
	"go.yaml.in/yaml/v3"
)

// answeredBy says what answers the calls of each kind of skill.
var answeredBy = map[mcpgate.SkillKind]string{
	mcpgate.SkillREST:  "HTTP endpoints",
	mcpgate.SkillMCP:   "upstream MCP server",
	mcpgate.SkillAgent: "agent's workers over the message service",
}

// restSkill reads the fields of a rest skill and its tools, declared or
// imported.
func (d *decoder) restSkill(f *fields, s *mcpgate.Skill) []*toolAt {
	s.BaseURL = d.str(f, "base_url")
	if s.BaseURL != "" {
		d.checkURL(f, "base_url", s.BaseURL, s.AllowPrivate)
	}
	switch source := d.str(f, "openapi"); {
	case source != "":
		return d.openapiTools(f, s, source)
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

// mcpSkill reads the fields of an mcp skill: an upstream server reached
// over Streamable HTTP (url) or started as a child over stdio (command).
// Its tools are discovered from the upstream, never declared.
func (d *decoder) mcpSkill(f *fields, s *mcpgate.Skill) {
	s.URL, s.Command, s.Cwd = d.str(f, "url"), d.str(f, "command"), d.str(f, "cwd")
	s.Args = d.stringList(f, "args")
	var at map[string]*yaml.Node
	s.Env, at = d.stringMap(f, "env")
	d.checkEnv(f.field("env"), s.Env, at)
	switch {
	case s.URL != "" && s.Command != "":
		d.errorf(f.keys["command"], f.field("command"), "set either url (Streamable HTTP) or command (stdio), not both")
	case s.URL != "":
		d.checkURL(f, "url", s.URL, s.AllowPrivate)
		d.refuseFields(f, "is for stdio upstreams (command)", "args", "env", "cwd")
	case s.Command != "":
		d.refuseSecretRef(f.keys["command"], f.field("command"), s.Command)
		if len(s.Headers) > 0 {
			d.errorf(f.keys["headers"], f.field("headers"), "headers go to Streamable HTTP upstreams (url); pass a stdio upstream its secrets in env")
		}
	default:
		d.errorf(f.lineNode("url"), f.field("url"), "is required: the upstream's Streamable HTTP URL (or command: to start it over stdio)")
	}
	if f.has("tools") {
		d.errorf(f.keys["tools"], f.field("tools"), "the tools of an mcp skill are discovered from the upstream server; remove tools:")
	}
}

// agentSkill reads the fields of an agent skill and the tools its agent
// declares besides the chat tool, which the registry adds.
func (d *decoder) agentSkill(f *fields, s *mcpgate.Skill) []*toolAt {
	s.Delivery = mcpgate.Delivery(d.str(f, "delivery"))
	s.PushURL, s.PushSecret = d.str(f, "push_url"), d.str(f, "push_secret")
	switch s.Delivery {
	case "", mcpgate.DeliveryPull:
		s.Delivery = mcpgate.DeliveryPull
		d.refuseFields(f, "is for delivery: push", "push_url", "push_secret")
	case mcpgate.DeliveryPush:
		d.pushTarget(f, s)
	default:
		d.errorf(f.keys["delivery"], f.field("delivery"), "%q is not pull or push", s.Delivery)
	}
	if len(s.Headers) > 0 {
		d.errorf(f.keys["headers"], f.field("headers"), "an agent skill sends no HTTP requests of its own; remove headers:")
	}
	return d.tools(f, s)
}

// pushTarget checks a push skill's URL (https, or loopback and private
// addresses with allow_private) and its secret reference.
func (d *decoder) pushTarget(f *fields, s *mcpgate.Skill) {
	if s.PushURL == "" {
		d.errorf(f.lineNode("push_url"), f.field("push_url"), "is required with delivery: push: the https URL envelopes are POSTed to")
	} else if u, err := url.Parse(s.PushURL); err == nil && u.Scheme != "https" && !s.AllowPrivate {
		d.errorf(f.keys["push_url"], f.field("push_url"), "must be https; plain http is allowed only to loopback or private addresses with allow_private: true")
	} else {
		d.checkURL(f, "push_url", s.PushURL, s.AllowPrivate)
	}
	switch {
	case s.PushSecret == "":
		d.errorf(f.lineNode("push_secret"), f.field("push_secret"), "is required with delivery: push: ${env:NAME} naming the HMAC key that signs each envelope")
	case !mcpgate.IsSecretRef(s.PushSecret):
		d.errorf(f.keys["push_secret"], f.field("push_secret"), "write the secret as ${env:NAME}; it is never stored in plain text")
	default:
		d.checkSecret(f.keys["push_secret"], f.field("push_secret"), "push_secret", s.PushSecret)
	}
}

// checkEnv checks a stdio upstream's environment: names without '=',
// one-line values, and secrets only as ${env:NAME}.
func (d *decoder) checkEnv(field string, env map[string]string, at map[string]*yaml.Node) {
	for _, name := range slices.Sorted(maps.Keys(env)) {
		v := env[name]
		switch {
		case name == "" || strings.ContainsAny(name, "=\x00"):
			d.errorf(at[name], field+"."+name, "is not a valid environment variable name")
		case strings.ContainsAny(v, "\x00\r\n"):
			d.errorf(at[name], field+"."+name, "must be one line")
		default:
			d.checkSecret(at[name], field+"."+name, name, v)
		}
	}
}

// refuseFields reports each of keys that f sets, saying why with reason.
func (d *decoder) refuseFields(f *fields, reason string, keys ...string) {
	for _, key := range keys {
		if f.has(key) {
			d.errorf(f.keys[key], f.field(key), "%s", reason)
		}
	}
}
