package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Webhooks counts webhook events dropped and delivery attempts.
type Webhooks struct {
	dropped  prometheus.Counter
	attempts *prometheus.HistogramVec
}

// NewWebhooks registers mcpgate_webhook_events_dropped_total and
// mcpgate_webhook_attempt_duration_seconds and returns them.
func (m *Metrics) NewWebhooks() *Webhooks {
	w := &Webhooks{
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpgate_webhook_events_dropped_total",
			Help: "Events no webhook will receive because the outbox's queue was full or the database refused them.",
		}),
		attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcpgate_webhook_attempt_duration_seconds", Help: "Webhook delivery attempts by result (success, retry, failed) and their time.",
			Buckets: latencyBuckets,
		}, []string{"result"}),
	}
	m.reg.MustRegister(w.dropped, w.attempts)
	return w
}

// WebhookEventDropped counts one dropped event.
func (w *Webhooks) WebhookEventDropped() { w.dropped.Inc() }

// ObserveWebhookAttempt counts one attempt and its time.
func (w *Webhooks) ObserveWebhookAttempt(result string, d time.Duration) {
	w.attempts.WithLabelValues(result).Observe(d.Seconds())
}
