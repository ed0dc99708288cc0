package openapi

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate/rest"
)

// credentials are what the security schemes a document uses become: skill
// headers, query values for every tool, and the secrets they need.
type credentials struct {
	headers map[string]string // header name → "${env:NAME}" template
	query   map[string]string // query name → "${env:NAME}"
	secrets []string
	notes   []string // schemes that could not be mapped
}

// security maps the security schemes the document's global security
// requirement and its operations ops name (see schemesUsed) to
// credentials, taking each secret from the variable upper(skill_scheme).
func (d *Document) security(ops []*operation, skill string) *credentials {
	c := &credentials{}
	schemes := object(object(d.root["components"])["securitySchemes"])
	for _, name := range d.schemesUsed(ops) {
		scheme, err := d.resolveObject(schemes[name], "security scheme")
		if schemes[name] == nil {
			err = fmt.Errorf("it is not defined in components.securitySchemes")
		}
		if err == nil {
			err = c.add(scheme, envName(skill, name, c.secrets))
		}
		if err != nil {
			c.notes = append(c.notes, fmt.Sprintf("security scheme %q: %v", name, err))
		}
	}
	slices.Sort(c.secrets)
	return c
}

// schemesUsed returns the names of the schemes the global security
// requirement and every operation's list: an operation may need a scheme
// the document's default does not, and its credentials must not be lost.
func (d *Document) schemesUsed(ops []*operation) []string {
	names := map[string]bool{}
	addRequirements(names, d.root["security"])
	for _, op := range ops {
		addRequirements(names, op.op["security"])
	}
	return slices.Sorted(maps.Keys(names))
}

// addRequirements adds the scheme names of a list of security
// requirements.
func addRequirements(names map[string]bool, v any) {
	list, _ := v.([]any)
	for _, req := range list {
		for name := range object(req) {
			names[name] = true
		}
	}
}

// add maps one scheme to a header or a query value holding ${env:env}.
func (c *credentials) add(scheme map[string]any, env string) error {
	typ, _ := scheme["type"].(string)
	in, _ := scheme["in"].(string)
	name, _ := scheme["name"].(string)
	ref := "${env:" + env + "}"
	switch {
	case typ == "apiKey" && in == "header":
		return c.setHeader(name, ref, env)
	case typ == "apiKey" && in == "query" && name != "":
		c.query = setValue(c.query, name, ref)
	case typ == "apiKey" && in == "cookie":
		return fmt.Errorf("an API key in a cookie is not supported; set a Cookie header on the skill instead")
	case typ == "http" && strings.EqualFold(stringField(scheme, "scheme"), "bearer"),
		typ == "oauth2", typ == "openIdConnect":
		return c.setHeader("Authorization", "Bearer "+ref, env)
	case typ == "http" && strings.EqualFold(stringField(scheme, "scheme"), "basic"):
		return c.setHeader("Authorization", "Basic "+ref, env)
	default:
		return fmt.Errorf("type %q (in %q, scheme %q) is not supported", typ, in, stringField(scheme, "scheme"))
	}
	c.secrets = append(c.secrets, env)
	return nil
}

// setHeader adds a skill header, unless another scheme already set it.
func (c *credentials) setHeader(name, value, env string) error {
	if !rest.ValidToken(name) {
		return fmt.Errorf("header name %q is not valid", name)
	}
	if c.hasHeader(name) {
		return fmt.Errorf("header %s is already set by another scheme", name)
	}
	c.headers = setValue(c.headers, name, value)
	c.secrets = append(c.secrets, env)
	return nil
}

// hasHeader reports whether the credentials set the header.
func (c *credentials) hasHeader(name string) bool {
	for h := range c.headers {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// setValue sets m[k] = v, making m if needed.
func setValue(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// stringField returns m[key] if it is a string.
func stringField(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// envChars matches what an environment variable name may not hold.
var envChars = regexp.MustCompile(`[^A-Z0-9_]`)

// envName returns upper(skill + "_" + scheme) with anything but A-Z, 0-9
// and '_' replaced by '_', never starting with a digit, and made unique
// among taken by a suffix.
func envName(skill, scheme string, taken []string) string {
	base := scheme
	if skill != "" {
		base = skill + "_" + scheme
	}
	base = envChars.ReplaceAllString(strings.ToUpper(base), "_")
	if base == "" || ('0' <= base[0] && base[0] <= '9') {
		base = "_" + base
	}
	name := base
	for i := 2; slices.Contains(taken, name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}
