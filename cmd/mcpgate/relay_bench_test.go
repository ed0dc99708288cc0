package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
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
	var id atomic.Int64
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := postRelayed(client, s.url, h, id.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := postRelayed(client, s.url, h, id.Add(1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// postRelayed sends one tools/call of the upstream's echo and checks that
// its answer came back.
func postRelayed(client *http.Client, url string, h http.Header, id int64) error {
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
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
	if resp.StatusCode != http.StatusOK || !bytes.Contains(reply, []byte(`"text":"ok"`)) {
		return &unexpectedReply{resp.StatusCode, string(reply)}
	}
	return nil
}
