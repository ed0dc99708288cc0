package api

import (
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// operatorOnly returns EFORBIDDEN when a caller who is not an administrator
// writes a skill that uses an operator's power: a ${env:NAME} reference,
// which the REST backend fills from the gateway's own environment (a user
// could otherwise send any of the gateway's secrets to a server of theirs),
// or allow_private, which lets requests past the SSRF guard into private
// networks, or a command, which would run a program on the gateway's host.
// Editing a skill that already has any is refused too, since the editor
// could point the operator's secret at another server.
func operatorOnly(c *caller, s *mcpgate.Skill) error {
	if c.isAdmin() {
		return nil
	}
	if s.Command != "" {
		return fieldErrorf(mcpgate.EFORBIDDEN, "command", "only an administrator may start a program on the gateway's host (a stdio upstream); use url for an upstream reached over HTTP")
	}
	if s.AllowPrivate {
		return fieldErrorf(mcpgate.EFORBIDDEN, "allow_private", "only an administrator may let a skill reach loopback and private addresses")
	}
	if field := secretField(s); field != "" {
		return fieldErrorf(mcpgate.EFORBIDDEN, field, "only an administrator may reference the gateway's environment (${env:…}) in a skill; ask an administrator to add this skill")
	}
	return nil
}

// secretField names the first field of s that references the gateway's
// environment, or returns "".
func secretField(s *mcpgate.Skill) string {
	if hasRef(s.BaseURL) {
		return "base_url"
	}
	if name := refIn(s.Headers); name != "" {
		return "headers." + name
	}
	if hasRef(s.URL) || hasRef(s.PushURL) {
		return "url"
	}
	if hasRef(s.PushSecret) {
		return "push_secret"
	}
	for i, t := range s.Tools {
		r := t.Request
		switch {
		case r == nil:
		case hasRef(r.URL) || hasRef(r.Path):
			return fmt.Sprintf("tools[%d].request", i)
		case refIn(r.Headers) != "":
			return fmt.Sprintf("tools[%d].request.headers.%s", i, refIn(r.Headers))
		case refIn(r.Query) != "":
			return fmt.Sprintf("tools[%d].request.query.%s", i, refIn(r.Query))
		case r.Body != nil && hasRef(string(r.Body.Template)):
			return fmt.Sprintf("tools[%d].request.body", i)
		}
	}
	return ""
}

// refIn returns a key of m whose value references the environment.
func refIn(m map[string]string) string {
	for k, v := range m {
		if hasRef(v) {
			return k
		}
	}
	return ""
}

// hasRef reports whether s references the environment.
func hasRef(s string) bool { return strings.Contains(s, "${env:") }
