package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

func TestParseRateLimits(t *testing.T) {
	file := head + "        rate_limit: {per_minute: 60, burst: 10}\n" + strings.Replace(oneTool,
		"            request:", "            rate_limit: {per_minute: 5, burst: 1}\n            request:", 1)
	c := mustParse(t, file, nil)
	s := c.Agents[0].Skills[0]
	if diff := cmp.Diff(&mcpgate.RateLimit{PerMinute: 60, Burst: 10}, s.RateLimit); diff != "" {
		t.Errorf("skill rate_limit (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&mcpgate.RateLimit{PerMinute: 5, Burst: 1}, s.Tools[0].RateLimit); diff != "" {
		t.Errorf("tool rate_limit (-want +got):\n%s", diff)
	}
}

func TestParseRateLimitErrors(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"no burst", "rate_limit: {per_minute: 60}", `mcpgate.yaml:10: agents[0].skills[0].rate_limit.burst: is required: a positive integer`},
		{"zero", "rate_limit: {per_minute: 0, burst: 1}", `mcpgate.yaml:10: agents[0].skills[0].rate_limit.per_minute: must be a positive integer, not "0"`},
		{"not a mapping", "rate_limit: 60", `mcpgate.yaml:10: agents[0].skills[0].rate_limit: must be a mapping of per_minute, burst`},
		{"typo", "rate_limit: {per_minute: 6, bursts: 1}", strings.Join([]string{
			`mcpgate.yaml:10: agents[0].skills[0].rate_limit: unknown field "bursts"; did you mean "burst"?`,
			`mcpgate.yaml:10: agents[0].skills[0].rate_limit.burst: is required: a positive integer`,
		}, "\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("mcpgate.yaml", []byte(head+"        "+c.line+"\n"+oneTool), nil)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want Errors", err)
			}
			if got := err.Error(); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestCheckSkillRateLimit checks that a skill read from the file checks
// its rate_limit by the domain's rule, the one the API's skills pass too.
func TestCheckSkillRateLimit(t *testing.T) {
	s := mustParse(t, head+oneTool, nil).Agents[0].Skills[0]
	s.RateLimit = &mcpgate.RateLimit{PerMinute: 10, Burst: 2}
	if p := s.Check(); len(p) != 0 {
		t.Fatalf("a good rate_limit: %v", p)
	}
	s.RateLimit.Burst = 0
	if p := s.Check(); len(p) == 0 || !strings.Contains(p.Error(), "rate_limit.burst") {
		t.Fatalf("burst 0: %v", p)
	}
}
