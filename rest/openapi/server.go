package openapi

import (
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// baseURL returns the API's base URL: override when set, else servers[0].url
// with its variables at their defaults, resolved against source when it is
// relative. Returns EINVALID when that gives no absolute http(s) URL.
func (d *Document) baseURL(override, source string) (string, error) {
	if override != "" {
		return absolute(override, "the base URL")
	}
	raw := "/" // the default server, per the specification
	var server map[string]any
	if list, _ := d.root["servers"].([]any); len(list) > 0 {
		server = object(list[0])
		raw = stringField(server, "url")
	}
	raw = expandVariables(raw, object(server["variables"]))
	if u, err := url.Parse(raw); err == nil && u.IsAbs() {
		return absolute(raw, "servers[0].url")
	}
	src, err := url.Parse(source)
	if source == "" || err != nil || (src.Scheme != "http" && src.Scheme != "https") {
		return "", mcpgate.Errorf(mcpgate.EINVALID,
			"the document's servers[0].url %q is not an absolute URL: give a base URL", raw)
	}
	ref, err := url.Parse(raw)
	if err != nil {
		return "", mcpgate.Errorf(mcpgate.EINVALID, "the document's servers[0].url %q is not a URL", raw)
	}
	return absolute(src.ResolveReference(ref).String(), "servers[0].url")
}

// expandVariables replaces each {name} in a server URL with the variable's
// default.
func expandVariables(raw string, vars map[string]any) string {
	for name, v := range vars {
		if def, ok := object(v)["default"]; ok {
			raw = strings.ReplaceAll(raw, "{"+name+"}", scalarText(def))
		}
	}
	return raw
}

// absolute checks that raw is an absolute http(s) URL with a host and
// returns it without a fragment, and without a trailing slash unless it
// has a query.
func absolute(raw, what string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", mcpgate.Errorf(mcpgate.EINVALID, "%s %q is not an absolute http or https URL", what, raw)
	}
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		return u.String(), nil
	}
	return strings.TrimRight(u.String(), "/"), nil
}
