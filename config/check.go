package config

import (
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/rest"
	"go.yaml.in/yaml/v3"
)

// checkHeaders checks header templates: valid names, one line each, and
// secrets only as ${env:NAME}.
func (d *decoder) checkHeaders(field string, headers map[string]string, at map[string]*yaml.Node) {
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		v, n, hf := headers[name], at[name], field+"."+name
		switch {
		case !rest.ValidToken(name):
			d.errorf(n, hf, "is not a valid header name")
		case strings.ContainsAny(v, "\r\n"):
			d.errorf(n, hf, "must be one line")
		default:
			d.checkSecret(n, hf, name, v)
		}
	}
}

// checkQuery checks query templates: secrets only as ${env:NAME}.
func (d *decoder) checkQuery(field string, query map[string]string, at map[string]*yaml.Node) {
	for _, name := range slices.Sorted(maps.Keys(query)) {
		d.checkSecret(at[name], field+"."+name, name, query[name])
	}
}

// checkSecret checks a header or query template, which the REST backend
// expands at call time: its ${env:NAME} references must be well formed and
// set, and a value under a name that looks secret must not be literal.
func (d *decoder) checkSecret(n *yaml.Node, field, name, v string) {
	switch {
	case mcpgate.HasSecretRef(v):
		if _, err := mcpgate.ExpandSecrets(v, d.lookup); err != nil {
			d.errorf(n, field, "%s", mcpgate.ErrorMessage(err))
		}
	case secretHeader(name) && len(rest.Placeholders(v)) == 0:
		d.errorf(n, field, "write the secret as ${env:NAME}; it is never stored in plain text")
	}
}

// secretHeader reports whether a header's (or query parameter's) name says
// it carries a secret.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	return slices.ContainsFunc([]string{"key", "token", "secret", "password"}, func(w string) bool {
		return strings.Contains(n, w)
	})
}

// checkURL checks an absolute URL the skill's requests go to: http or
// https, a host, and no address the SSRF guard refuses.
func (d *decoder) checkURL(f *fields, key, raw string, allowPrivate bool) {
	at, field := f.keys[key], f.field(key)
	if !d.refuseSecretRef(at, field, raw) || !d.refuseURLSecrets(at, field, raw) {
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
	d.errorf(at, field, "%s", msg)
}

// refuseURLSecrets reports secrets written into a URL, which is stored as
// written: user information (user:pass@) and query parameters whose names
// look secret. It returns whether there were none.
func (d *decoder) refuseURLSecrets(at *yaml.Node, field, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return true // the SSRF guard's check names the problem
	}
	ok := u.User == nil
	if !ok {
		d.errorf(at, field, "must not hold a user name or password (user:pass@), which would be stored in plain text; "+
			"send the secret as ${env:NAME} in a header, such as Authorization, or in a query template under the request's query:")
	}
	query, _ := url.ParseQuery(u.RawQuery) // what parses is enough to find names
	for _, name := range slices.Sorted(maps.Keys(query)) {
		if secretHeader(name) {
			d.errorf(at, field, "the query parameter %q looks secret and would be stored in plain text; "+
				"take it out of the URL and write it under the request's query: as ${env:NAME}", name)
			ok = false
		}
	}
	return ok
}

// refuseSecretRef reports ${env:NAME} where it would not be expanded, and
// returns whether s is free of it.
func (d *decoder) refuseSecretRef(at *yaml.Node, field, s string) bool {
	if !mcpgate.HasSecretRef(s) {
		return true
	}
	d.errorf(at, field, "%s", notExpanded)
	return false
}

// notExpanded says where secret references work.
const notExpanded = "${env:NAME} is expanded only in headers and query values; send secrets there"
