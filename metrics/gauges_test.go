package metrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// fakeSources answer the gauges' queries and count them.
type fakeSources struct{ queries int }

func (f *fakeSources) ListSkillHealth(context.Context, string) ([]*mcpgate.SkillHealth, error) {
	f.queries++
	return []*mcpgate.SkillHealth{
		{AgentID: "shop", Skill: "crm", State: mcpgate.HealthConnected},
		{AgentID: "shop", Skill: "mail", State: mcpgate.HealthError},
	}, nil
}

func (f *fakeSources) UnackedMessages(context.Context) (map[string]int, error) {
	f.queries++
	return map[string]int{"weather": 4}, nil
}

func (f *fakeSources) PendingApprovals(context.Context) (int, error) {
	f.queries++
	return 2, nil
}

func (f *fakeSources) OpenSessions() int { return 7 }
func (f *fakeSources) OpenStreams() int  { return 3 }
func (f *fakeSources) Served() int64     { return 11 }
func (f *fakeSources) HandedOver() int64 { return 2 }

func TestGauges(t *testing.T) {
	m, f := New(), &fakeSources{}
	m.Watch(Sources{Health: f, Queue: f, Transport: f, Front: f, Approvals: f, CacheFor: time.Hour})
	m.ObserveBackend("shop", "crm", "mcp", "ok", 20*time.Millisecond)
	body := mustScrape(t, m)
	for _, want := range []string{
		`mcpgate_upstream_up{agent="shop",skill="crm",state="connected"} 1`,
		`mcpgate_upstream_up{agent="shop",skill="mail",state="error"} 0`,
		`mcpgate_agent_queue_depth{agent="weather"} 4`,
		`mcpgate_approvals_pending 2`,
		`mcpgate_mcp_sessions_open 7`,
		`mcpgate_sse_streams_open 3`,
		`mcpgate_http_front_requests_total 11`,
		`mcpgate_http_front_handovers_total 2`,
		`mcpgate_backend_call_duration_seconds_count{agent="shop",kind="mcp",outcome="ok",skill="crm"} 1`,
	} {
		mustHaveLine(t, body, want)
	}
	mustScrape(t, m)
	if f.queries != 3 {
		t.Errorf("two scrapes within the cache's time made %d store queries, want 3", f.queries)
	}
}

func TestGaugesWithoutSources(t *testing.T) {
	m := New()
	m.Watch(Sources{})
	body := mustScrape(t, m)
	for _, name := range []string{"mcpgate_upstream_up", "mcpgate_approvals_pending", "mcpgate_mcp_sessions_open"} {
		if containsMetric(body, name) {
			t.Errorf("%s exported without its source", name)
		}
	}
}

// containsMetric reports whether a scrape has a sample of the metric.
func containsMetric(body, name string) bool {
	for l := range strings.Lines(body) {
		if strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			return true
		}
	}
	return false
}
