package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/otel"
)

// otlpEndpoint returns where traces go: --otlp-endpoint, else
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT
// with /v1/traces; "" (tracing off) when none is set, or when
// OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is none.
func (m *Main) otlpEndpoint() string {
	env := func(k string) string { v, _ := m.Env.LookupEnv(k); return strings.TrimSpace(v) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || env("OTEL_TRACES_EXPORTER") == "none" {
		return ""
	}
	switch {
	case m.Config.OTLPEndpoint != "":
		return m.Config.OTLPEndpoint
	case env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		return env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	case env("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		return strings.TrimSuffix(env("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	}
	return ""
}

// newTracer returns the tracer the endpoint asks for: an OTLP exporter, or
// a NopTracer when tracing is off.
func (m *Main) newTracer(ctx context.Context) (mcpgate.Tracer, error) {
	endpoint := m.otlpEndpoint()
	if endpoint == "" {
		return mcpgate.NopTracer{}, nil
	}
	opts := otel.Options{Endpoint: endpoint, Headers: m.otlpHeaders()}
	opts.ServiceName, _ = m.Env.LookupEnv("OTEL_SERVICE_NAME")
	if v, ok := m.Env.LookupEnv("OTEL_BSP_SCHEDULE_DELAY"); ok {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			opts.BatchTimeout = time.Duration(ms) * time.Millisecond
		}
	}
	t, err := otel.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	m.shutdownTracer = t.Shutdown
	m.logger.Info("exporting traces", "endpoint", endpoint)
	return t, nil
}

// otlpHeaders parses OTEL_EXPORTER_OTLP_HEADERS: key=value pairs,
// comma-separated.
func (m *Main) otlpHeaders() map[string]string {
	v, _ := m.Env.LookupEnv("OTEL_EXPORTER_OTLP_HEADERS")
	out := make(map[string]string)
	for pair := range strings.SplitSeq(v, ",") {
		if k, val, ok := strings.Cut(pair, "="); ok && strings.TrimSpace(k) != "" {
			out[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
	}
	return out
}
