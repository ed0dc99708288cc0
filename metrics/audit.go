package metrics

import "github.com/prometheus/client_golang/prometheus"

// AuditDrops counts audit records dropped because the audit log's queue was
// full.
type AuditDrops struct{ c prometheus.Counter }

// NewAuditDrops registers mcpgate_audit_dropped_total and returns it.
func (m *Metrics) NewAuditDrops() *AuditDrops {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "mcpgate_audit_dropped_total",
		Help: "Call records the audit log dropped because its queue was full.",
	})
	m.reg.MustRegister(c)
	return &AuditDrops{c}
}

// AuditDropped counts one dropped record.
func (d *AuditDrops) AuditDropped() { d.c.Inc() }
