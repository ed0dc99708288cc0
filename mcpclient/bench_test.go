package mcpclient

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/mcpgate/mcpgate/h1"
)

// BenchmarkCallHTTP measures one tools/call over Streamable HTTP against
// a lean upstream on 127.0.0.1 that answers on an event stream, as the
// go-sdk servers do; the process holds both sides, so allocs/op counts
// the server's net/http work too.
func BenchmarkCallHTTP(b *testing.B) {
	f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"This is a simple text response for testing.\"}]}}\n\n")
	}}
	url := serveFake(b, f)
	s, err := Connect(context.Background(), NewHTTP(url, nil, nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	params := json.RawMessage(`{"name":"test_simple_text","arguments":{},"_meta":{"progressToken":"mcpgate-1"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Call(context.Background(), "tools/call", params, &CallOptions{ProgressToken: "mcpgate-1", Notify: func(string, json.RawMessage) {}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallH1 measures the same call over h1's transport, as the
// gateway makes it: its POSTs through Post, and for comparison through
// RoundTrip (an http.Request and http.Response a message).
func BenchmarkCallH1(b *testing.B) {
	for _, c := range []struct {
		name string
		wrap func(*h1.Transport) http.RoundTripper
	}{
		{"post", func(t *h1.Transport) http.RoundTripper { return t }},
		{"roundtrip", func(t *h1.Transport) http.RoundTripper { return roundTripOnly{t} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := &fake{toolsCall: func(w http.ResponseWriter, id string) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"This is a simple text response for testing.\"}]}}\n\n")
			}}
			var d net.Dialer
			tr := &h1.Transport{Dial: d.DialContext, Next: http.DefaultTransport}
			b.Cleanup(tr.CloseIdleConnections)
			s, err := Connect(context.Background(), NewHTTP(serveFake(b, f), &http.Client{Transport: c.wrap(tr)}, nil), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			params := json.RawMessage(`{"name":"test_simple_text","arguments":{}}`)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Call(context.Background(), "tools/call", params, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// roundTripOnly is h1's transport without its Post.
type roundTripOnly struct{ t *h1.Transport }

func (r roundTripOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	return r.t.RoundTrip(req)
}

// Parks is h1's: the reply streams are parked all the same.
func (r roundTripOnly) Parks(u *url.URL) bool { return r.t.Parks(u) }
