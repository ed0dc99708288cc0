package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWebhookMetrics(t *testing.T) {
	m := New()
	w := m.NewWebhooks()
	w.WebhookEventDropped()
	w.ObserveWebhookAttempt("retry", 20*time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{"mcpgate_webhook_events_dropped_total 1", `mcpgate_webhook_attempt_duration_seconds_count{result="retry"} 1`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
