package oauth

import (
	"testing"
	"time"
)

func TestSecureCookies(t *testing.T) {
	for base, want := range map[string]bool{
		"https://gw.example":     true,
		"http://127.0.0.1:8094":  true,
		"http://localhost:8094":  true,
		"http://[::1]:8094":      true,
		"http://gw.internal:80":  false,
		"http://10.0.0.5:8094":   false,
		"https://10.0.0.5:8443/": true,
	} {
		if got := secureCookies(base); got != want {
			t.Errorf("secureCookies(%q) = %v, want %v", base, got, want)
		}
	}
	s := &Server{secure: false}
	if got := s.cookieName(sessionCookie); got != "mcpgate_session" {
		t.Errorf("cookie name without Secure = %q, want no __Host- prefix", got)
	}
}

func TestParseResource(t *testing.T) {
	s := &Server{base: "https://gw.example"}
	tests := []struct {
		raw, resource, agent string
		ok                   bool
	}{
		{"https://gw.example", "https://gw.example", "", true},
		{"https://gw.example/", "https://gw.example", "", true},
		{"HTTPS://GW.example/shop/mcp", "https://gw.example/shop/mcp", "shop", true},
		{"https://gw.example/shop/mcp/", "https://gw.example/shop/mcp", "shop", true},
		{"https://gw.example/shop/mcp#x", "", "", false},
		{"https://gw.example/shop/mcp?x=1", "", "", false},
		{"https://gw.example/a/b/mcp", "", "", false},
		{"https://gw.example/shop", "", "", false},
		{"https://gw.example.evil/shop/mcp", "", "", false},
		{"http://gw.example/shop/mcp", "", "", false},
		{"shop", "", "", false},
	}
	for _, tt := range tests {
		resource, agent, ok := s.parseResource(tt.raw)
		if resource != tt.resource || agent != tt.agent || ok != tt.ok {
			t.Errorf("parseResource(%q) = %q, %q, %v; want %q, %q, %v", tt.raw, resource, agent, ok, tt.resource, tt.agent, tt.ok)
		}
	}
}

func TestCanonicalBase(t *testing.T) {
	for raw, want := range map[string]string{
		"https://GW.example/":        "https://gw.example",
		"http://127.0.0.1:8094":      "http://127.0.0.1:8094",
		"https://gw.example/prefix/": "https://gw.example/prefix",
	} {
		if got, err := canonicalBase(raw); err != nil || got != want {
			t.Errorf("canonicalBase(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "gw.example", "ftp://gw.example", "https://gw.example/?x=1"} {
		if _, err := canonicalBase(raw); err == nil {
			t.Errorf("canonicalBase(%q) succeeded", raw)
		}
	}
}

func TestLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(Limit{Burst: 2, Every: time.Minute}, func() time.Time { return now })
	got := []bool{l.allow("a"), l.allow("a"), l.allow("a"), l.allow("b")}
	now = now.Add(time.Minute)
	got = append(got, l.allow("a"), l.allow("a"))
	want := []bool{true, true, false, true, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("allow results = %v, want %v", got, want)
		}
	}
}

func TestVerifyPKCE(t *testing.T) {
	// The example of RFC 7636 appendix B.
	verifier, challenge := "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !verifyPKCE(verifier, challenge) {
		t.Error("the RFC's verifier does not match its challenge")
	}
	if verifyPKCE(verifier[:42], challenge) || verifyPKCE(verifier+"!", challenge) || verifyPKCE(challenge, challenge) {
		t.Error("a wrong or malformed verifier matched")
	}
}
