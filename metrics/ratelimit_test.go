package metrics

import "testing"

func TestRateLimited(t *testing.T) {
	m := New()
	m.RateLimited("a1")
	m.RateLimited("a1")
	m.RateLimited("a2")
	body := mustScrape(t, m)
	mustHaveLine(t, body, `mcpgate_rate_limited_total{agent="a1"} 2`)
	mustHaveLine(t, body, `mcpgate_rate_limited_total{agent="a2"} 1`)
	mustHaveLine(t, body, `# HELP mcpgate_rate_limited_total Tool calls refused by a rate limit, by agent.`)
}
