package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// benchConfig is one agent with one REST tool on the local backend.
const benchConfig = `users:
  - name: alice
agents:
  - id: bench
    owner: alice
    mcp_enabled: true
    skills:
      - name: api
        kind: rest
        base_url: BACKEND
        allow_private: true
        tools:
          - name: echo
            input_schema: {type: object, properties: {text: {type: string}}, required: [text]}
            request: {method: POST, path: /echo, body: all}
EXTRA`

// BenchmarkToolsCall measures tools/call through the whole stack: HTTP,
// authentication, session, pipeline, REST backend on 127.0.0.1 and back,
// with plain JSON replies, in one initialized session.
func BenchmarkToolsCall(b *testing.B) { benchToolsCall(b) }

// BenchmarkToolsCallTraced is BenchmarkToolsCall with tracing on: every
// call's spans go to an OTLP/HTTP endpoint that accepts and drops them.
func BenchmarkToolsCallTraced(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	b.Cleanup(sink.Close)
	benchToolsCall(b, "--otlp-endpoint", sink.URL+"/v1/traces")
}

// benchToolsCall measures tools/call of a REST tool, serial and parallel,
// on a gateway started with flags.
func benchToolsCall(b *testing.B, flags ...string) {
	g := mustStartMain(b, benchConfig, flags...)
	_, oag := g.mustKey(b, "alice", "")
	s := g.mustInitialize(b, "bench", bearer(oag), "2025-11-25")
	h := s.sessionHeader(headers("Content-Type", "application/json", "Accept", "application/json"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	benchSerialParallel(b, func(id int64) error { return postCall(client, s.url, h, id) })
}

// benchSerialParallel runs post, with a new request id each time, as the
// sub-benchmarks serial and parallel.
func benchSerialParallel(b *testing.B, post func(id int64) error) {
	var id atomic.Int64
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := post(id.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := post(id.Add(1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// postCall sends one tools/call of echo with the given id and checks that
// it succeeded.
func postCall(client *http.Client, url string, h http.Header, id int64) error {
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	return postCheck(client, url, h, body)
}

// unexpectedReply is a tools/call reply that is not the echo's result.
type unexpectedReply struct {
	status int
	body   string
}

// Error describes the reply.
func (e *unexpectedReply) Error() string {
	return "tools/call: HTTP " + strconv.Itoa(e.status) + ": " + e.body
}
