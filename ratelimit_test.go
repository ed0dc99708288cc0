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
	sec := int64(time.Second)
	for _, c := range []struct {
		tat, now, want int64
		taken, next    int64
		wait           time.Duration
	}{
		{0, 100 * sec, 3, 3, 103 * sec, 0},                                    // a full bucket
		{103 * sec, 100 * sec, 3, 1, 104 * sec, 0},                            // one left
		{104 * sec, 100*sec + sec/4, 1, 0, 104 * sec, 750 * time.Millisecond}, // the true wait
		{104 * sec, 101 * sec, 1, 1, 105 * sec, 0},                            // one came back
		{104 * sec, 99 * sec, 1, 0, 104 * sec, 2 * time.Second},               // a clock behind refills nothing
		{0, 3600 * sec, 9, 4, 3604 * sec, 0},                                  // never more than the burst
	} {
		taken, next, wait := l.Take(c.tat, c.now, c.want)
		if taken != c.taken || next != c.next || wait != c.wait {
			t.Errorf("Take(%d, %d, %d) = %d, %d, %v; want %d, %d, %v", c.tat, c.now, c.want, taken, next, wait, c.taken, c.next, c.wait)
		}
	}
}

func TestRateLimitSpanCapped(t *testing.T) {
	l := RateLimit{PerMinute: 1, Burst: 1 << 40}
	if l.Span() <= 0 || l.Span() > 5e18 {
		t.Fatalf("Span = %v", l.Span())
	}
	if taken, _, _ := l.Take(0, time.Now().UnixNano(), 1<<40); taken <= 0 {
		t.Fatalf("a huge bucket gave %d tokens", taken)
	}
}
