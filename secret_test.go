package mcpgate

import "testing"

func TestIsSecretRef(t *testing.T) {
	for s, want := range map[string]bool{
		"${env:PUSH_SECRET}": true, "${env:A}${env:B}": false, "x${env:A}": false,
		"${env:bad-name}": false, "hunter2": false, "": false,
	} {
		if got := IsSecretRef(s); got != want {
			t.Errorf("IsSecretRef(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestExpandSecrets(t *testing.T) {
	env := map[string]string{"TOKEN": "t0k", "_B2": "bee"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	for in, want := range map[string]string{
		"Bearer ${env:TOKEN}":        "Bearer t0k",
		"${env:TOKEN}-${env:_B2}!":   "t0k-bee!",
		"no reference":               "no reference",
		"${env:MISSING}":             "",
		"${env:bad-name} ${env:_B2}": "",
	} {
		got, err := ExpandSecrets(in, lookup)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("ExpandSecrets(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
