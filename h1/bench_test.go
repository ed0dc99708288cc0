package h1

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkRoundTrip posts a small JSON-RPC request and reads its reply
// over one keep-alive connection: this package's transport against
// net/http's (go test -bench RoundTrip -benchmem ./h1).
func BenchmarkRoundTrip(b *testing.B) {
	s := httptest.NewServer(http.HandlerFunc(echo))
	defer s.Close()
	var d net.Dialer
	for _, tt := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"h1", &Transport{Dial: d.DialContext}},
		{"net-http", &http.Transport{DialContext: d.DialContext}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			defer tt.rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/sse", strings.NewReader(body))
				req.Header["Content-Type"] = []string{"application/json"}
				resp, err := tt.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkServe posts a small JSON-RPC request to a server whose handler
// reads it and answers with a JSON reply, over one keep-alive connection
// of this package's transport: this package's server against net/http's
// (go test -bench Serve -benchmem ./h1). The CPU figure is the whole
// process's, client and server.
func BenchmarkServe(b *testing.B) {
	reply := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = []string{"application/json"}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`)
	}
	for _, name := range []string{"h1", "net-http"} {
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			std := &http.Server{Handler: http.HandlerFunc(reply)}
			defer std.Close()
			if name == "h1" {
				fast := &Server{Handler: http.HandlerFunc(reply)}
				go std.Serve(fast.Handover())
				go fast.Serve(ln)
				defer fast.Shutdown(b.Context())
			} else {
				go std.Serve(ln)
			}
			var d net.Dialer
			rt := &Transport{Dial: d.DialContext}
			defer rt.CloseIdleConnections()
			url := "http://" + ln.Addr().String() + "/agent/mcp"
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header["Content-Type"] = []string{"application/json"}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
