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
