// Package metrics holds the gateway's Prometheus metrics in a registry of
// its own (no global state) and serves them at /metrics.
//
// It must not import the gateway's other packages: they depend on it
// through small interfaces of their own.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
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

	// The series a tools/call records, resolved from their labels once.
	callsOf    series[callKey, countedTime]
	backendsOf series[backendKey, prometheus.Observer]
	requestsOf series[requestKey, countedTime]
}

// series holds the series of a vector, or of vectors recorded together,
// by their labels: resolving labels in a vector hashes them and takes the
// vector's lock, every time, and each tools/call records three series
// (its request's, its own and its backend's). A series, once resolved,
// is found again without a lock.
type series[K comparable, V any] struct {
	m sync.Map // K → V
}

// get returns the series of k, resolving it with resolve the first time.
func (s *series[K, V]) get(k K, resolve func(K) V) V {
	if v, ok := s.m.Load(k); ok {
		return v.(V)
	}
	v, _ := s.m.LoadOrStore(k, resolve(k))
	return v.(V)
}

// callKey labels a tool call's series.
type callKey struct{ agent, tool, outcome string }

// countedTime is a count and a duration histogram recorded together:
// a tool call's, or an HTTP request's.
type countedTime struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// observe counts one and records its duration d.
func (c countedTime) observe(d time.Duration) {
	c.count.Inc()
	c.duration.Observe(d.Seconds())
}

// backendKey labels a backend's call time.
type backendKey struct{ agent, skill, kind, outcome string }

// requestKey labels an HTTP request's series.
type requestKey struct {
	route string
	code  int
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
	m.callsOf.get(callKey{agent, tool, outcome}, m.resolveCall).observe(d)
}

// resolveCall resolves a tool call's series.
func (m *Metrics) resolveCall(k callKey) countedTime {
	return countedTime{m.calls.WithLabelValues(k.agent, k.tool, k.outcome), m.callDuration.WithLabelValues(k.agent, k.tool)}
}

// ObserveBackend records how long a skill's backend took to answer.
func (m *Metrics) ObserveBackend(agent, skill, kind, outcome string, d time.Duration) {
	m.backendsOf.get(backendKey{agent, skill, kind, outcome}, m.resolveBackend).Observe(d.Seconds())
}

// resolveBackend resolves a backend's call time.
func (m *Metrics) resolveBackend(k backendKey) prometheus.Observer {
	return m.backendTime.WithLabelValues(k.agent, k.skill, k.kind, k.outcome)
}

// RateLimited counts a tool call refused by a rate limit.
func (m *Metrics) RateLimited(agent string) {
	m.rateLimited.WithLabelValues(agent).Inc()
}

// ObserveRequest records one HTTP request.
func (m *Metrics) ObserveRequest(route string, code int, d time.Duration) {
	m.requestsOf.get(requestKey{route, code}, m.resolveRequest).observe(d)
}

// resolveRequest resolves an HTTP request's series.
func (m *Metrics) resolveRequest(k requestKey) countedTime {
	return countedTime{m.requests.WithLabelValues(k.route, statusText(k.code)), m.requestTime.WithLabelValues(k.route)}
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
