package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/server"
)

// watchGauges lets the metrics read, at each scrape, the upstream health
// the relay records, the agents' queue depths (when the store counts
// them), the transport's open sessions and streams, and what the HTTP
// front served itself and handed to net/http. Approvals pending join when
// an approval store exists.
func (m *Main) watchGauges(met *metrics.Metrics) {
	src := metrics.Sources{Health: m.store, Transport: m.mcp, Front: m.http.fast}
	if q, ok := m.store.(metrics.QueueDepths); ok {
		src.Queue = q
	}
	met.Watch(src)
}

// metricsAccess says who may read /metrics on the main listener: nobody
// when --metrics-addr serves it apart, anyone when the gateway listens on
// a loopback address only, and administrators otherwise, since the page
// names every agent and tool.
func (m *Main) metricsAccess() server.MetricsAccess {
	switch {
	case m.Config.MetricsAddr != "":
		return server.MetricsElsewhere
	case isLoopback(m.ln.Addr()):
		return server.MetricsOpen
	}
	return server.MetricsAdmins
}

// isLoopback reports whether a listener's address is a loopback one, which
// only this host can reach.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// startMetrics serves /metrics, unauthenticated as Prometheus scrapes it,
// on its own listener when --metrics-addr is set.
func (m *Main) startMetrics(h http.Handler) error {
	if m.Config.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.Config.MetricsAddr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	m.metricsLn = ln
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.logger.Warn("metrics server stopped", "err", err)
		}
	}()
	m.closers = append(m.closers, srv.Close)
	m.logger.Info("metrics listening", "addr", ln.Addr().String())
	return nil
}

// MetricsAddr returns the address of the --metrics-addr listener, or ""
// when there is none.
func (m *Main) MetricsAddr() string {
	if m.metricsLn == nil {
		return ""
	}
	return m.metricsLn.Addr().String()
}
