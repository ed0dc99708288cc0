package mcpgate

import (
	"regexp"
	"strings"
)

// secretRef matches a secret reference: ${env:NAME}.
var secretRef = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// LookupFunc finds an environment variable, as os.LookupEnv does.
type LookupFunc func(name string) (string, bool)

// HasSecretRef reports whether s references a secret as ${env:NAME}.
func HasSecretRef(s string) bool { return strings.Contains(s, "${env:") }

// IsSecretRef reports whether s is exactly one ${env:NAME} reference and
// nothing else, as a value that must hold a secret (such as a push secret)
// is written.
func IsSecretRef(s string) bool {
	loc := secretRef.FindStringIndex(s)
	return loc != nil && loc[0] == 0 && loc[1] == len(s)
}

// SecretRefs returns the names of the environment variables s references.
func SecretRefs(s string) []string {
	var names []string
	for _, m := range secretRef.FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// ExpandSecrets replaces each ${env:NAME} in s with the variable's value.
// Returns EINVALID naming the variable if one is not set, and for a "${env:"
// that is not a well-formed reference.
func ExpandSecrets(s string, lookup LookupFunc) (string, error) {
	if !HasSecretRef(s) {
		return s, nil
	}
	var missing string
	out := secretRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[len("${env:") : len(ref)-1] // ref matched secretRef whole
		v, ok := lookup(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", Errorf(EINVALID, "environment variable %s is not set", missing)
	}
	if strings.Contains(out, "${env:") && strings.Count(s, "${env:") != len(SecretRefs(s)) {
		return "", Errorf(EINVALID, "malformed secret reference in %q: write ${env:NAME}", redact(s))
	}
	return out, nil
}

// redact keeps the shape of a template whose literal parts may be secret.
func redact(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// LooksSecret reports whether a header's (or query parameter's, or
// environment variable's) name says that its value is a secret.
func LooksSecret(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, w := range []string{"key", "token", "secret", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// NotExpanded says where secret references work, for a value that holds
// one where it would not be expanded.
const NotExpanded = "${env:NAME} is expanded only in headers and query values; send secrets there"

// checkSecretValue checks a value the backend expands at call time (a
// header, a query value, an environment variable): its ${env:NAME}
// references must be well formed, and a value under a name that looks
// secret must not be literal. Whether the variables are set is not its
// business: see UnsetSecrets.
func checkSecretValue(p *Problems, field, name, v string) {
	switch {
	case HasSecretRef(v):
		if _, err := ExpandSecrets(v, func(string) (string, bool) { return "", true }); err != nil {
			p.Addf(field, "%s", ErrorMessage(err))
		}
	case LooksSecret(name) && len(Placeholders(v)) == 0:
		p.Addf(field, "write the secret as ${env:NAME}; it is never stored in plain text")
	}
}
