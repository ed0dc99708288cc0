package skilledit

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/registry"
	"github.com/mcpgate/mcpgate/rest"
)

// BindingChecker checks what one backend binds a skill's tools to, such as
// a REST request template against the tool's input schema. Problems have
// fields relative to the skill.
type BindingChecker interface {
	CheckBinding(s *mcpgate.Skill) mcpgate.Problems
}

// Checker runs every check of one skill, whatever its source (the config
// file, the management API, the CLI, an OpenAPI import): the skill's own
// (mcpgate.Skill.Check), the SSRF guard's view of every URL it names, its
// backend's binding check, and its compiled schemas. It is not safe for
// concurrent use; a Checker compiles each distinct schema once.
type Checker struct {
	// Bindings are the backends' checks by kind of skill.
	Bindings map[mcpgate.SkillKind]BindingChecker
	schemas  registry.SchemaChecker
}

// NewChecker returns a Checker with the backends' binding checks.
func NewChecker() *Checker {
	return &Checker{Bindings: map[mcpgate.SkillKind]BindingChecker{mcpgate.SkillREST: rest.Checker{}}}
}

// Check returns every problem of s, with fields relative to the skill, in
// the order: the skill's own, its URLs, its binding, its schemas.
func (c *Checker) Check(s *mcpgate.Skill) mcpgate.Problems {
	p := s.Check()
	p = append(p, checkURLs(s)...)
	if b := c.Bindings[s.Kind]; b != nil {
		p = append(p, b.CheckBinding(s)...)
	}
	return append(p, c.schemas.CheckSkill(s)...)
}

// CheckSkill runs a new Checker's checks on s and returns them as an
// error: mcpgate.Problems (EINVALID), nil when there are none.
func CheckSkill(s *mcpgate.Skill) error { return NewChecker().Check(s).Err() }

// checkURLs checks the absolute URLs a skill's requests go to: http or
// https, a host, no address the SSRF guard refuses, no secrets.
func checkURLs(s *mcpgate.Skill) mcpgate.Problems {
	var p mcpgate.Problems
	switch s.Kind {
	case mcpgate.SkillREST:
		if s.BaseURL != "" {
			checkURL(&p, "base_url", s.BaseURL, s.AllowPrivate)
		}
		for i, t := range s.Tools {
			if r := t.Request; r != nil && r.URL != "" && r.Path == "" {
				checkURL(&p, fmt.Sprintf("tools[%d].request.url", i), r.URL, s.AllowPrivate)
			}
		}
	case mcpgate.SkillMCP:
		if s.URL != "" && s.Command == "" {
			checkURL(&p, "url", s.URL, s.AllowPrivate)
		}
	case mcpgate.SkillAgent:
		if u, err := url.Parse(s.PushURL); s.Delivery == mcpgate.DeliveryPush && s.PushURL != "" && (err != nil || u.Scheme == "https" || s.AllowPrivate) {
			checkURL(&p, "push_url", s.PushURL, s.AllowPrivate)
		}
	}
	return p
}

// checkURL checks one absolute URL.
func checkURL(p *mcpgate.Problems, field, raw string, allowPrivate bool) {
	if mcpgate.HasSecretRef(raw) {
		p.Addf(field, "%s", mcpgate.NotExpanded)
		return
	}
	if !urlSecrets(p, field, raw) {
		return
	}
	err := netguard.Policy{AllowPrivate: allowPrivate}.CheckURL(raw)
	if err == nil {
		return
	}
	msg := err.Error()
	var blocked *netguard.BlockedError
	if errors.As(err, &blocked) && !allowPrivate && blocked.Overridable() && blocked.Reason == "" {
		msg += "; set allow_private: true on the skill to allow it"
	}
	p.Addf(field, "%s", msg)
}

// urlSecrets reports secrets written into a URL, which is stored as
// written: user information (user:pass@) and query parameters whose names
// look secret. It returns whether there were none.
func urlSecrets(p *mcpgate.Problems, field, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return true // the SSRF guard's check names the problem
	}
	ok := u.User == nil
	if !ok {
		p.Addf(field, "must not hold a user name or password (user:pass@), which would be stored in plain text; "+
			"send the secret as ${env:NAME} in a header, such as Authorization, or in a query template under the request's query:")
	}
	query, _ := url.ParseQuery(u.RawQuery) // what parses is enough to find names
	for _, name := range slices.Sorted(maps.Keys(query)) {
		if mcpgate.LooksSecret(name) {
			p.Addf(field, "the query parameter %q looks secret and would be stored in plain text; "+
				"take it out of the URL and write it under the request's query: as ${env:NAME}", name)
			ok = false
		}
	}
	return ok
}

// CheckAgent checks an agent's skills as a whole (registry.Check): each
// skill's fields, compiled schemas, and no tool name served twice
// (ECONFLICT naming both skills).
func CheckAgent(skills []*mcpgate.Skill) error { return registry.Check(skills) }
