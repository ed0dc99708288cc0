package mcpclient

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// A POST's request is built from the URL parsed once, with one value for
// its body; a redirect still gets the body again.
func TestRequestAllocs(t *testing.T) {
	tr := NewHTTP("http://127.0.0.1:1/mcp", nil, http.Header{"Authorization": {"Bearer x"}}).(*httpTransport)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	req, err := tr.request(context.Background(), http.MethodPost, msg)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://127.0.0.1:1/mcp" || req.Host != "127.0.0.1:1" || req.ContentLength != int64(len(msg)) || req.Header.Get("Authorization") != "Bearer x" {
		t.Fatalf("request %s %q %d %v", req.URL, req.Host, req.ContentLength, req.Header)
	}
	getBody(req)
	for range 2 {
		b, err := req.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(b); string(got) != string(msg) {
			t.Fatalf("GetBody gave %q", got)
		}
	}
	if got, _ := io.ReadAll(req.Body); string(got) != string(msg) {
		t.Fatalf("the body is %q", got)
	}
	tr.negotiated(ProtocolVersion)
	tr.session, tr.sessionHdr = "s1", []string{"s1"}
	n := testing.AllocsPerRun(100, func() { tr.request(context.Background(), http.MethodPost, msg) })
	if n > 5 { // the request, its URL, its header map and its body; the session's headers are made once
		t.Errorf("building a request allocates %v times, want at most 5", n)
	}
	if _, err := NewHTTP("http://[::1", nil, nil).(*httpTransport).request(context.Background(), http.MethodPost, msg); err == nil {
		t.Error("a URL that does not parse gave a request")
	}
}
