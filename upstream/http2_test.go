package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/netguard"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPSUpstreamOverHTTP2 relays calls to an upstream that offers
// HTTP/2 over TLS: every request of the session (initialize, the calls,
// the GET stream) goes over HTTP/2, on one connection.
func TestHTTPSUpstreamOverHTTP2(t *testing.T) {
	s := newServer()
	textTool(s, "hello", `{"content":[{"type":"text","text":"hi"}]}`)
	var mu sync.Mutex
	protos := map[string]int{}
	conns := 0
	sdkHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos[r.Proto]++
		mu.Unlock()
		sdkHandler.ServeHTTP(w, r)
	}))
	hs.EnableHTTP2 = true
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	hs.StartTLS()
	t.Cleanup(hs.Close)

	guard := netguard.New(&netguard.Options{TLSConfig: hs.Client().Transport.(*http.Transport).TLSClientConfig})
	m := New(&Options{Logger: quietLogger(), Guard: guard})
	t.Cleanup(func() { m.Close() })
	sk := httpSkill("s1", hs.URL+"/mcp")
	for range 3 {
		res, err := m.CallTool(context.Background(), callOf(sk, "hello", `{}`))
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "result", string(res.Raw), `"text":"hi"`)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(protos) != 1 || protos["HTTP/2.0"] < 5 {
		t.Errorf("requests by protocol = %v, want HTTP/2.0 only (initialize, initialized, three calls)", protos)
	}
	if conns != 1 {
		t.Errorf("%d connections to the upstream, want 1", conns)
	}
}
