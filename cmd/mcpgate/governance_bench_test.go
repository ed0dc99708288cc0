package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/proctime"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// auditSettle is how long a benchmark waits after its loop before reading
// the CPU time, so that the audit log's writer has flushed what the loop
// queued (it writes at least every 500 ms).
const auditSettle = 700 * time.Millisecond

// measureCPU runs call in a loop and reports the process's CPU time per
// call, cpu-ns/op, beside ns/op.
func measureCPU(b *testing.B, call func(i int) error) {
	b.ReportAllocs()
	start := proctime.Self()
	i := 0
	for b.Loop() {
		i++
		if err := call(i); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	time.Sleep(auditSettle)
	b.ReportMetric(float64(proctime.Self()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkToolsCallGovernance is BenchmarkToolsCall's serial run with the
// process CPU per call, on each engine: the backend called directly (the
// baseline the gateway's CPU is measured against), the gateway without
// the governance stages (no idempotency store, no audit log, no rate
// limit), with all three on (a rate limit never reached, the audit log
// writing every call) for a call without a key, and the same with a new
// idempotency key on every call. docs/performance.md, "Governance cost",
// has the commands and the figures.
func BenchmarkToolsCallGovernance(b *testing.B) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	b.Run("direct", func(b *testing.B) {
		backend := newTestBackend(b)
		measureCPU(b, func(int) error { return postEcho(client, backend.URL+"/echo") })
	})
	engines := []struct {
		name  string
		flags func(b *testing.B) []string
	}{
		{"sqlite", func(*testing.B) []string { return nil }},
		{"postgres", func(b *testing.B) []string { return []string{"--db", pgtest.Database(b, pgtest.Admin(b))} }},
	}
	for _, e := range engines {
		b.Run(e.name+"/off", func(b *testing.B) {
			benchGoverned(b, client, false, e.flags(b), nil)
		})
		on := []string{"--rate-limit", "1000000000:1000000000"}
		b.Run(e.name+"/on", func(b *testing.B) {
			benchGoverned(b, client, true, append(e.flags(b), on...), nil)
		})
		b.Run(e.name+"/on+key", func(b *testing.B) {
			benchGoverned(b, client, true, append(e.flags(b), on...), func(i int) string { return "bench-" + strconv.Itoa(i) })
		})
	}
}

// benchGoverned measures tools/call of echo on a gateway with or without
// the governance stages; key, when not nil, gives each call its
// idempotency key.
func benchGoverned(b *testing.B, client *http.Client, governed bool, flags []string, key func(i int) string) {
	g := startBenchMain(b, governed, flags...)
	_, oag := g.mustKey(b, "alice", "")
	s := g.mustInitialize(b, "bench", bearer(oag), "2025-11-25")
	h := s.sessionHeader(headers("Content-Type", "application/json", "Accept", "application/json"))
	measureCPU(b, func(i int) error {
		if key == nil {
			return postCall(client, s.url, h, int64(i))
		}
		return postKeyedCall(client, s.url, h, int64(i), key(i))
	})
}

// startBenchMain starts a gateway on benchConfig; governed false leaves
// the idempotency stage and the audit log out.
func startBenchMain(b *testing.B, governed bool, flags ...string) *testGateway {
	b.Helper()
	if governed {
		return mustStartMain(b, benchConfig, flags...)
	}
	return mustStartMainWith(b, benchConfig, func(m *Main) { m.Config.ungoverned = true }, flags...)
}

// postKeyedCall is postCall with an idempotency key in the arguments.
func postKeyedCall(client *http.Client, url string, h http.Header, id int64, key string) error {
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","idempotency_key":"` + key + `"}}}`)
	return postCheck(client, url, h, body)
}

// echoResult is the result of a tools/call of echo with the text "hi".
var echoResult = []byte(`"result":{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}]}`)

// postCheck posts a tools/call of echo and checks that it succeeded.
func postCheck(client *http.Client, url string, h http.Header, body []byte) error {
	return postExpect(client, url, h, body, echoResult)
}

// postExpect posts a JSON-RPC request and checks that it succeeded with a
// reply holding want.
func postExpect(client *http.Client, url string, h http.Header, body, want []byte) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(reply, want) {
		return &unexpectedReply{resp.StatusCode, string(reply)}
	}
	return nil
}

// postEcho posts the echo tool's request body to the REST backend itself.
func postEcho(client *http.Client, url string) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader([]byte(`{"text":"hi"}`)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || string(reply) != `{"text":"hi"}` {
		return &unexpectedReply{resp.StatusCode, string(reply)}
	}
	return nil
}
