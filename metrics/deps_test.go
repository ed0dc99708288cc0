package metrics

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps metrics on the Prometheus client alone: the gateway's
// packages depend on it, not the other way round.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/prometheus/client_golang/prometheus", "github.com/prometheus/client_golang/prometheus/collectors", "github.com/prometheus/client_golang/prometheus/promhttp")
}
