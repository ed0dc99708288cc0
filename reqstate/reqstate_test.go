package reqstate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/reqstate"
)

func TestRoundTrip(t *testing.T) {
	s := reqstate.New([]byte("0123456789abcdef0123456789abcdef"))
	now := time.Unix(1_800_000_000, 0)
	tok := s.Sign([]byte(`{"id":"x"}`), now.Add(time.Minute))
	got, err := s.Open(tok, now)
	if err != nil || string(got) != `{"id":"x"}` {
		t.Fatalf("Open = %q, %v", got, err)
	}
	// Another replica with the same secret verifies it without any state.
	if _, err := reqstate.New([]byte("0123456789abcdef0123456789abcdef")).Open(tok, now); err != nil {
		t.Fatalf("Open on another Signer with the same secret: %v", err)
	}
}

func TestTampered(t *testing.T) {
	s := reqstate.New([]byte("secret-one"))
	now := time.Unix(1_800_000_000, 0)
	tok := s.Sign([]byte(`{"id":"x"}`), now.Add(time.Minute))
	parts := strings.Split(tok, ".")
	forged := reqstate.New([]byte("secret-two")).Sign([]byte(`{"id":"x"}`), now.Add(time.Minute))
	for name, bad := range map[string]string{
		"suffix":        tok + "-TAMPERED",
		"payload":       parts[0] + "." + parts[1] + ".eyJpZCI6InkifQ." + parts[3],
		"expiry":        parts[0] + ".zzzzzzzz." + parts[2] + "." + parts[3],
		"other key":     forged,
		"empty":         "",
		"no prefix":     strings.TrimPrefix(tok, "rs1."),
		"extra segment": tok + ".x",
	} {
		if _, err := s.Open(bad, now); !errors.Is(err, reqstate.ErrTampered) {
			t.Errorf("%s: Open = %v, want ErrTampered", name, err)
		}
	}
}

func TestExpired(t *testing.T) {
	s := reqstate.New([]byte("secret"))
	now := time.Unix(1_800_000_000, 0)
	tok := s.Sign([]byte(`{}`), now.Add(time.Minute))
	if _, err := s.Open(tok, now.Add(time.Minute)); err != nil {
		t.Fatalf("Open at the expiry: %v", err)
	}
	if _, err := s.Open(tok, now.Add(time.Minute+time.Millisecond)); !errors.Is(err, reqstate.ErrExpired) {
		t.Fatalf("Open after the expiry = %v, want ErrExpired", err)
	}
}
