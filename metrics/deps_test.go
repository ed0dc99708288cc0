package metrics

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps metrics on the root package and the Prometheus
// client: the gateway's other packages depend on it, not the other way
// round.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/prometheus/client_golang/prometheus", "github.com/prometheus/client_golang/prometheus/collectors", "github.com/prometheus/client_golang/prometheus/promhttp")
}
