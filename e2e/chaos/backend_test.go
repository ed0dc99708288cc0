package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// counter is the REST API behind the chaos agent's tool. It honours the
// idempotency key the gateway passes on, as a payment API does: the first
// delivery of a key executes (numbered), a later one is answered with the
// first one's result without executing again. It counts both, so the test
// sees every delivery the gateway made per key.
type counter struct {
	URL string

	mu         sync.Mutex
	deliveries map[string][]time.Time // by key, in arrival order
	executions map[string]int         // by key
	unkeyed    int                    // deliveries without a key
}

// startCounter serves POST /record until t ends.
func startCounter(t *testing.T) *counter {
	c := &counter{deliveries: map[string][]time.Time{}, executions: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(c.record))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// record handles one delivery of the tool's call.
func (c *counter) record(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key string `json:"idempotency_key"`
	}
	b, _ := io.ReadAll(r.Body)
	if json.Unmarshal(b, &body) != nil || body.Key == "" {
		c.mu.Lock()
		c.unkeyed++
		c.mu.Unlock()
		http.Error(w, `{"error":"idempotency_key is required"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"execution":%d}`, c.deliver(body.Key))
}

// deliver counts a delivery of key and returns its execution's number: a
// new one for the key's first delivery, the first's for a repeat.
func (c *counter) deliver(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deliveries[key] = append(c.deliveries[key], time.Now())
	if _, ok := c.executions[key]; !ok {
		c.executions[key] = len(c.executions) + 1
	}
	return c.executions[key]
}

// counts is what the backend saw, copied for the checks.
type counts struct {
	deliveries map[string][]time.Time
	keys       int // distinct keys executed
	unkeyed    int
}

// snapshot copies the counts.
func (c *counter) snapshot() counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := make(map[string][]time.Time, len(c.deliveries))
	for k, v := range c.deliveries {
		d[k] = append([]time.Time(nil), v...)
	}
	return counts{deliveries: d, keys: len(c.executions), unkeyed: c.unkeyed}
}
