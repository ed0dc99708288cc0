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
