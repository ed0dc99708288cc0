// Package metrics holds the gateway's Prometheus metrics in a registry of
// its own (no global state) and serves them at /metrics.
//
// It must not import the gateway's other packages: they depend on it
// through small interfaces of their own.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the gateway's counters and histograms.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	requestTime  *prometheus.HistogramVec
	calls        *prometheus.CounterVec
	callDuration *prometheus.HistogramVec
	rateLimited  *prometheus.CounterVec
	backendTime  *prometheus.HistogramVec
}

// latencyBuckets span a fast local call to a slow backend, in seconds.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// New returns metrics registered in a fresh registry, with the Go runtime
// and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_http_requests_total",
			Help: "HTTP requests served, by route and status code.",
		}, []string{"route", "code"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcpgate_http_request_duration_seconds", Help: "Time to serve an HTTP request, by route.",
			Buckets: latencyBuckets,
		}, []string{"route"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_tool_calls_total",
			Help: "Tool calls, by agent, tool and outcome (ok, tool_error, or an error reason).",
		}, []string{"agent", "tool", "outcome"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcpgate_tool_call_duration_seconds", Help: "Tool call latency through the pipeline, by agent and tool.",
			Buckets: latencyBuckets,
		}, []string{"agent", "tool"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_rate_limited_total",
			Help: "Tool calls refused by a rate limit, by agent.",
		}, []string{"agent"}),
		backendTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcpgate_backend_call_duration_seconds", Help: "Time a skill's backend took to answer a call, by agent, skill, kind and outcome (ok, tool_error, or an error reason).",
			Buckets: latencyBuckets,
		}, []string{"agent", "skill", "kind", "outcome"}),
	}
	m.reg.MustRegister(m.requests, m.requestTime, m.calls, m.callDuration, m.rateLimited, m.backendTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveCall records one tool call.
func (m *Metrics) ObserveCall(agent, tool, outcome string, d time.Duration) {
	m.calls.WithLabelValues(agent, tool, outcome).Inc()
	m.callDuration.WithLabelValues(agent, tool).Observe(d.Seconds())
}

// ObserveBackend records how long a skill's backend took to answer.
func (m *Metrics) ObserveBackend(agent, skill, kind, outcome string, d time.Duration) {
	m.backendTime.WithLabelValues(agent, skill, kind, outcome).Observe(d.Seconds())
}

// RateLimited counts a tool call refused by a rate limit.
func (m *Metrics) RateLimited(agent string) {
	m.rateLimited.WithLabelValues(agent).Inc()
}

// ObserveRequest records one HTTP request.
func (m *Metrics) ObserveRequest(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, statusText(code)).Inc()
	m.requestTime.WithLabelValues(route).Observe(d.Seconds())
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// statusText formats a status code, a negative one as "0", without
// allocating for common ones.
func statusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 202:
		return "202"
	case 400:
		return "400"
	case 401:
		return "401"
	case 404:
		return "404"
	}
	return strconv.Itoa(max(code, 0))
}
