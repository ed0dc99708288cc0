package replicas

import (
	"net/http"
	"testing"

	"github.com/mcpgate/mcpgate/e2e/conformance"
)

// testConformance runs the pinned suite's active server scenarios
// (conformance.RelayScenarios) through a round-robin proxy that adds the
// key (the suite sends none), forwarding Host and Origin as sent, against
// the relayed fixture: sampling and elicitation answers, SSE polling and
// resumption included, with every request free to land on any replica.
// The fixture's one known warning is tolerated
// (conformance.FixtureDropsResumedResult).
func testConformance(t *testing.T, e *env) {
	url := e.Front(t, http.Header{"Authorization": {"Bearer " + e.key}}) + "/everything/mcp"
	for _, scenario := range conformance.RelayScenarios {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel() // each scenario has its own sessions
			conformance.Judge(t, conformance.RunSettled(t, e2eDir, url, scenario), conformance.FixtureDropsResumedResult)
		})
	}
}
