package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDashboardQueriesExist checks that every metric the Grafana dashboard
// in docs/ queries is one the gateway exports, so that renaming a metric
// without the dashboard fails here.
func TestDashboardQueriesExist(t *testing.T) {
	exported := exportedNames(t)
	exprs := dashboardExprs(t)
	if len(exprs) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	name := regexp.MustCompile(`mcpgate_[a-z_]+`)
	for _, e := range exprs {
		for _, n := range name.FindAllString(e, -1) {
			if !exported[n] {
				t.Errorf("the dashboard queries %s, which the gateway does not export (in %s)", n, e)
			}
		}
	}
}

// exportedNames returns the names of every series a fully wired Metrics
// exports, histograms with their _bucket, _count and _sum.
func exportedNames(t *testing.T) map[string]bool {
	m, f := New(), &fakeSources{}
	m.Watch(Sources{Health: f, Queue: f, Transport: f, Approvals: f})
	m.ObserveCall("a", "t", "ok", time.Millisecond)
	m.ObserveRequest("/r", 200, time.Millisecond)
	m.RateLimited("a")
	m.ObserveBackend("a", "s", "rest", "ok", time.Millisecond)
	m.NewAuditDrops().AuditDropped()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]bool)
	for _, mf := range families {
		n := mf.GetName()
		out[n] = true
		if mf.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				out[n+s] = true
			}
		}
	}
	return out
}

// dashboardExprs returns the PromQL of every panel of the dashboard.
func dashboardExprs(t *testing.T) []string {
	b, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) != "" {
				out = append(out, tg.Expr)
			}
		}
	}
	return out
}
