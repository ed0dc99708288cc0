package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseGovernance(t *testing.T) {
	c := mustParse(t, "idempotency_ttl: 2h\ncall_retention: 240h\n", nil)
	if time.Duration(c.IdempotencyTTL) != 2*time.Hour || time.Duration(c.CallRetention) != 240*time.Hour {
		t.Fatalf("idempotency_ttl %v, call_retention %v", c.IdempotencyTTL, c.CallRetention)
	}
	if c := mustParse(t, "users: []\n", nil); c.IdempotencyTTL != 0 || c.CallRetention != 0 {
		t.Fatalf("unset: %+v", c)
	}
	_, err := Parse("mcpgate.yaml", []byte("idempotency_ttl: soon\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "idempotency_ttl") {
		t.Fatalf("a bad duration: %v", err)
	}
}
