package rest

import "testing"

func TestValidToken(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"X-Api-Key", true},
		{"!#$%&'*+-.^_`|~09azAZ", true},
		{"", false},
		{"X Bad", false},
		{"X:Bad", false},
		{"X\r\nBad", false},
		{"Ünicode", false},
		{"a(b)", false},
		{"a/b", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ValidToken(c.name); got != c.want {
				t.Errorf("ValidToken(%q) = %v, want %v", c.name, got, c.want)
			}
		})
	}
}
