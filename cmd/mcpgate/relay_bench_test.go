package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolsCallRelayed measures a relayed tools/call through the
// whole stack: HTTP, authentication, session, pipeline, the upstream
// client, a go-sdk server on 127.0.0.1 (its event stream's end parked)
// and back, in one initialized session. The go-sdk server and the
// benchmark's client run in the same process: its allocations per call
// are theirs and the gateway's (-memprofile tells them apart).
func BenchmarkToolsCallRelayed(b *testing.B) {
	up := sdk.NewServer(&sdk.Implementation{Name: "bench-upstream", Version: "1"}, nil)
	addTextTool(up, "echo")
	url := serveUpstream(b, up, func(*http.Request) {})
	g := mustStartMain(b, strings.ReplaceAll(relayConfig, "UPSTREAM", url), "--reload-every", "1h")
	_, oag := g.mustKey(b, "alice", "")
	s := g.mustInitialize(b, "relay", bearer(oag), "2025-11-25")
	eventually(b, "the upstream's tool echo listed", func() bool { return listsTool(b, s, "echo") })
	h := s.sessionHeader(headers("Content-Type", "application/json", "Accept", "application/json, text/event-stream"))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	benchSerialParallel(b, func(id int64) error { return postRelayed(client, s.url, h, id) })
}

// postRelayed sends one tools/call of the upstream's echo and checks that
// its answer came back.
func postRelayed(client *http.Client, url string, h http.Header, id int64) error {
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	return postExpect(client, url, h, body, []byte(`"text":"ok"`))
}
