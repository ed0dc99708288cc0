package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultScrapeCache is how long the gauges that query the store keep
// their values, when Sources.CacheFor is zero: scrapes from several
// Prometheus servers cost the store one query per interval.
const DefaultScrapeCache = 10 * time.Second

// scrapeTimeout bounds the store queries of one scrape.
const scrapeTimeout = 2 * time.Second

// SkillHealths lists the health the upstream manager records of mcp
// skills: the store.
type SkillHealths interface {
	ListSkillHealth(ctx context.Context, agentID string) ([]*mcpgate.SkillHealth, error)
}

// QueueDepths counts each agent's unacknowledged messages: the store.
type QueueDepths interface {
	UnackedMessages(ctx context.Context) (map[string]int, error)
}

// Transport counts what the MCP transport holds open on this replica.
type Transport interface {
	OpenSessions() int
	OpenStreams() int
}

// Front counts what the gateway's HTTP/1.1 front did: the requests it
// served itself and the connections it handed to net/http.
type Front interface {
	Served() int64
	HandedOver() int64
}

// Approvals counts the tool calls waiting for a human's approval.
type Approvals interface {
	PendingApprovals(ctx context.Context) (int, error)
}

// Sources are what the gauges read at scrape time. Each may be nil; its
// gauges are then not exported.
type Sources struct {
	Health    SkillHealths
	Queue     QueueDepths
	Transport Transport
	Front     Front
	Approvals Approvals
	// CacheFor is how long store-backed values are kept (default
	// DefaultScrapeCache).
	CacheFor time.Duration
}

// gauges collects the scrape-time gauges.
type gauges struct {
	src                                  Sources
	up, depth, sessions, streams, approv *prometheus.Desc
	served, handed                       *prometheus.Desc

	mu      sync.Mutex
	at      time.Time
	cached  []prometheus.Metric
	nowFunc func() time.Time
}

// Watch registers the gauges read from src at each scrape:
// mcpgate_upstream_up, mcpgate_agent_queue_depth, mcpgate_mcp_sessions_open,
// mcpgate_sse_streams_open and mcpgate_approvals_pending, and the counters
// mcpgate_http_front_requests_total and
// mcpgate_http_front_handovers_total.
func (m *Metrics) Watch(src Sources) {
	if src.CacheFor <= 0 {
		src.CacheFor = DefaultScrapeCache
	}
	m.reg.MustRegister(&gauges{
		src:      src,
		up:       prometheus.NewDesc("mcpgate_upstream_up", "1 when an mcp skill's upstream server is connected, else 0, by agent, skill and state.", []string{"agent", "skill", "state"}, nil),
		depth:    prometheus.NewDesc("mcpgate_agent_queue_depth", "Messages to an agent's workers not acknowledged yet, by agent.", []string{"agent"}, nil),
		sessions: prometheus.NewDesc("mcpgate_mcp_sessions_open", "MCP sessions this replica holds in memory.", nil, nil),
		streams:  prometheus.NewDesc("mcpgate_sse_streams_open", "SSE responses this replica is writing.", nil, nil),
		approv:   prometheus.NewDesc("mcpgate_approvals_pending", "Tool calls waiting for a human's approval.", nil, nil),
		served:   prometheus.NewDesc("mcpgate_http_front_requests_total", "Requests the HTTP/1.1 front served itself (the common POSTs).", nil, nil),
		handed:   prometheus.NewDesc("mcpgate_http_front_handovers_total", "Connections the HTTP/1.1 front handed to net/http (GET streams, anything else).", nil, nil),
		nowFunc:  time.Now,
	})
}

// Describe sends the gauges' descriptions.
func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{g.up, g.depth, g.sessions, g.streams, g.approv, g.served, g.handed} {
		ch <- d
	}
}

// Collect sends the transport's counts, read now, and the store's, cached.
func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	if t := g.src.Transport; t != nil {
		ch <- prometheus.MustNewConstMetric(g.sessions, prometheus.GaugeValue, float64(t.OpenSessions()))
		ch <- prometheus.MustNewConstMetric(g.streams, prometheus.GaugeValue, float64(t.OpenStreams()))
	}
	if f := g.src.Front; f != nil {
		ch <- prometheus.MustNewConstMetric(g.served, prometheus.CounterValue, float64(f.Served()))
		ch <- prometheus.MustNewConstMetric(g.handed, prometheus.CounterValue, float64(f.HandedOver()))
	}
	for _, m := range g.stored() {
		ch <- m
	}
}

// stored returns the store-backed gauges, queried at most once per
// CacheFor. A failed query leaves its gauges out of the scrape.
func (g *gauges) stored() []prometheus.Metric {
	g.mu.Lock()
	defer g.mu.Unlock()
	if now := g.nowFunc(); g.cached == nil || now.Sub(g.at) >= g.src.CacheFor {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		defer cancel()
		g.cached, g.at = append(append(g.health(ctx), g.queue(ctx)...), g.approvals(ctx)...), now
	}
	return g.cached
}

// health returns mcpgate_upstream_up for each mcp skill.
func (g *gauges) health(ctx context.Context) []prometheus.Metric {
	if g.src.Health == nil {
		return nil
	}
	hs, err := g.src.Health.ListSkillHealth(ctx, "")
	if err != nil {
		return nil
	}
	out := make([]prometheus.Metric, 0, len(hs))
	for _, h := range hs {
		v := 0.0
		if h.State == mcpgate.HealthConnected {
			v = 1
		}
		out = append(out, prometheus.MustNewConstMetric(g.up, prometheus.GaugeValue, v, h.AgentID, h.Skill, h.State))
	}
	return out
}

// queue returns mcpgate_agent_queue_depth for each agent with messages.
func (g *gauges) queue(ctx context.Context) []prometheus.Metric {
	if g.src.Queue == nil {
		return nil
	}
	depths, err := g.src.Queue.UnackedMessages(ctx)
	if err != nil {
		return nil
	}
	out := make([]prometheus.Metric, 0, len(depths))
	for agent, n := range depths {
		out = append(out, prometheus.MustNewConstMetric(g.depth, prometheus.GaugeValue, float64(n), agent))
	}
	return out
}

// approvals returns mcpgate_approvals_pending.
func (g *gauges) approvals(ctx context.Context) []prometheus.Metric {
	if g.src.Approvals == nil {
		return nil
	}
	n, err := g.src.Approvals.PendingApprovals(ctx)
	if err != nil {
		return nil
	}
	return []prometheus.Metric{prometheus.MustNewConstMetric(g.approv, prometheus.GaugeValue, float64(n))}
}
