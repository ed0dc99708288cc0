package netguard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"strings"
	"syscall"
	"testing"
)

// mustServe starts a server on 127.0.0.1 that runs h, closed at the end of
// the test.
func mustServe(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// okHandler answers "ok".
func okHandler(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

// redirectTo answers with a redirect to target.
func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	}
}

// get fetches url with c and returns the body.
func get(tb testing.TB, c *http.Client, url string) (string, error) {
	tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// wantBlocked fails the test unless err is a *BlockedError of class c.
func wantBlocked(tb testing.TB, err error, c Class) *BlockedError {
	tb.Helper()
	var be *BlockedError
	if !errors.As(err, &be) || be.Class != c {
		tb.Fatalf("error = %v, want a refusal of class %q", err, c)
	}
	return be
}

func TestGuardLoopback(t *testing.T) {
	srv := mustServe(t, okHandler)
	g := New(nil)
	t.Cleanup(g.CloseIdleConnections)

	_, err := get(t, g.Client(Policy{}), srv.URL)
	be := wantBlocked(t, err, Loopback)
	if be.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("refused address = %s, want 127.0.0.1", be.Addr)
	}
	body, err := get(t, g.Client(Policy{AllowPrivate: true}), srv.URL)
	if err != nil || body != "ok" {
		t.Fatalf("allow-private GET = %q, %v; want ok", body, err)
	}
}

func TestGuardLocalhostName(t *testing.T) {
	srv := mustServe(t, okHandler)
	g := New(nil)
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	_, err := get(t, g.Client(Policy{}), url)
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("GET %s = %v, want it blocked", url, err)
	}
	wantBlocked(t, err, Loopback)
}

// TestGuardRedirectToLoopback follows a redirect from a server the policy
// allows (the test exempts its address) to one it refuses: the dial check
// runs again for the redirect's connection.
func TestGuardRedirectToLoopback(t *testing.T) {
	inner := mustServe(t, okHandler)
	outer := mustServe(t, redirectTo(inner.URL+"/secret"))
	allowed := netip.MustParseAddrPort(outer.Listener.Addr().String())
	control := func(network, address string, c syscall.RawConn) error {
		if address == allowed.String() {
			return nil
		}
		return Policy{}.Control(network, address, c)
	}
	c := newClient(Policy{AllowPrivate: true}, control, withDefaults(nil))
	_, err := get(t, c, outer.URL)
	be := wantBlocked(t, err, Loopback)
	if be.Addr.String() != "127.0.0.1" {
		t.Errorf("refused address = %s, want 127.0.0.1", be.Addr)
	}
}

func TestGuardRedirects(t *testing.T) {
	g := New(nil)
	private := g.Client(Policy{AllowPrivate: true})
	var loop *httptest.Server
	loop = mustServe(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.URL+r.URL.Path+"x", http.StatusFound)
	})
	ten := mustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.Path) > MaxRedirects {
			io.WriteString(w, "ok")
			return
		}
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	})
	tests := []struct {
		name    string
		url     string
		wantErr error
		class   Class
	}{
		{"metadata with allow-private", mustServe(t, redirectTo("http://169.254.169.254/latest/meta-data/")).URL, ErrBlocked, Metadata},
		{"metadata IPv4-mapped", mustServe(t, redirectTo("http://[::ffff:a9fe:a9fe]/")).URL, ErrBlocked, Metadata},
		{"another scheme", mustServe(t, redirectTo("ftp://127.0.0.1/file")).URL, ErrBlocked, Public},
		{"more than ten", loop.URL + "/", ErrTooManyRedirects, Public},
		{"exactly ten", ten.URL + "/", nil, Public},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := get(t, private, tt.url)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("GET = %v, want %v", err, tt.wantErr)
			}
			if tt.class != Public {
				wantBlocked(t, err, tt.class)
			}
		})
	}
}

func TestGuardTransport(t *testing.T) {
	g := New(&Options{MaxIdleConnsPerHost: 8})
	for _, p := range []Policy{{}, {AllowPrivate: true}} {
		c := g.Client(p)
		tr := c.Transport.(*http.Transport)
		if tr.Proxy != nil {
			t.Errorf("%+v: the transport uses a proxy", p)
		}
		if tr.MaxIdleConnsPerHost != 8 {
			t.Errorf("%+v: MaxIdleConnsPerHost = %d, want 8", p, tr.MaxIdleConnsPerHost)
		}
		if again := g.Client(p); again != c {
			t.Errorf("%+v: Client returns a new client each time", p)
		}
	}
}

func TestGuardKeepAlive(t *testing.T) {
	srv := mustServe(t, okHandler)
	c := New(nil).Client(Policy{AllowPrivate: true})
	var reused []bool
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
	for range 3 {
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if len(reused) != 3 || reused[0] || !reused[1] || !reused[2] {
		t.Errorf("connection reuse = %v, want [false true true]", reused)
	}
}

// TestGuardDialer checks the policy's dial function, which other
// transports (package h1's) connect with: loopback is refused under the
// strict policy and reached under allow-private.
func TestGuardDialer(t *testing.T) {
	srv := mustServe(t, okHandler)
	g := New(nil)
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, err := g.Dialer(Policy{})(context.Background(), "tcp", addr)
	wantBlocked(t, err, Loopback)
	c, err := g.Dialer(Policy{AllowPrivate: true})(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("allow-private dial: %v", err)
	}
	c.Close()
}
