package mcpgate

import (
	"encoding/json"
	"testing"
	"time"
)

func TestRateLimitValidate(t *testing.T) {
	for _, c := range []struct {
		l    RateLimit
		code string
	}{
		{RateLimit{PerMinute: 1, Burst: 1}, ""},
		{RateLimit{PerMinute: 0, Burst: 1}, EINVALID},
		{RateLimit{PerMinute: 60, Burst: 0}, EINVALID},
		{RateLimit{PerMinute: -1, Burst: 5}, EINVALID},
	} {
		if got := ErrorCode(c.l.Validate()); got != c.code {
			t.Errorf("%+v: code %q, want %q", c.l, got, c.code)
		}
	}
}

func TestSkillValidatesRateLimits(t *testing.T) {
	in := json.RawMessage(`{"type":"object"}`)
	s := &Skill{Name: "s", Kind: SkillREST, RateLimit: &RateLimit{PerMinute: 1}, Tools: []*Tool{{Name: "t", InputSchema: in}}}
	if err := s.Validate(); ErrorMessage(err) != `skill "s": rate_limit.burst must be at least 1, not 0` {
		t.Errorf("skill: %v", err)
	}
	s.RateLimit = nil
	s.Tools[0].RateLimit = &RateLimit{Burst: 1}
	if err := s.Validate(); ErrorMessage(err) != `skill "s": tools[0]: tool "t": rate_limit.per_minute must be a positive integer, not 0` {
		t.Errorf("tool: %v", err)
	}
}

func TestRateLimitTake(t *testing.T) {
	l := RateLimit{PerMinute: 60, Burst: 4}
	for _, c := range []struct {
		tokens  float64
		elapsed time.Duration
		want    int64
		taken   int64
		wait    time.Duration
		left    float64
	}{
		{4, 0, 3, 3, 0, 1},
		{0.25, 0, 1, 0, 750 * time.Millisecond, 0.25},
		{0.25, 750 * time.Millisecond, 1, 1, 0, 0},
		{0, time.Hour, 9, 4, 0, 0},
		{1, -time.Hour, 1, 1, 0, 0}, // a clock behind refills nothing
	} {
		taken, wait, left := l.Take(c.tokens, c.elapsed, c.want)
		if taken != c.taken || wait != c.wait || left < c.left-1e-6 || left > c.left+1e-6 {
			t.Errorf("Take(%v, %v, %d) = %d, %v, %v; want %d, %v, %v", c.tokens, c.elapsed, c.want, taken, wait, left, c.taken, c.wait, c.left)
		}
	}
}
