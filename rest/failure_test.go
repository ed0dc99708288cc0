package rest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
)

// wantError fails the test unless res is an error result whose text holds
// each of want and not the query's secret.
func wantError(tb testing.TB, res *mcpgate.Result, want ...string) {
	tb.Helper()
	text := resultText(res)
	if !res.IsError {
		tb.Fatalf("result is not an error: %s", text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			tb.Errorf("result %q does not contain %q", text, w)
		}
	}
	if strings.Contains(text, "secret") {
		tb.Errorf("result %q shows the query", text)
	}
}

// closedAddr returns a 127.0.0.1 address nothing listens on.
func closedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// secretQuery is a query whose value must never show in a result.
var secretQuery = map[string]string{"key": "secret"}

func TestCallToolSSRF(t *testing.T) {
	var hits atomic.Int32
	srv := mustServe(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	host := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		name         string
		base         string
		allowPrivate bool // on the skill
		serverWide   bool // Options.AllowPrivate
		want         []string
	}{
		{"loopback", srv.URL, false, false, []string{"Request to " + host + " refused: blocked by the SSRF guard: address 127.0.0.1 is loopback; set allow_private: true on the skill to allow it."}},
		{"localhost name", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), false, false, []string{"is loopback; set allow_private: true"}},
		{"private literal", "http://10.0.0.5/", false, false, []string{"address 10.0.0.5 is private; set allow_private"}},
		{"IPv4-mapped", "http://[::ffff:127.0.0.1]:1/", false, false, []string{"address ::ffff:127.0.0.1 is loopback"}},
		{"metadata with allow_private", "http://169.254.169.254/latest", true, false, []string{"address 169.254.169.254 is a cloud metadata service."}},
		{"metadata with the server-wide override", "http://[fd00:ec2::254]/", false, true, []string{"is a cloud metadata service."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(&Options{AllowPrivate: tt.serverWide})
			call := newCall(tt.base, &mcpgate.Request{Path: "/x", Query: secretQuery}, `{}`)
			call.Skill.AllowPrivate = tt.allowPrivate
			wantError(t, mustCall(t, b, call), tt.want...)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
	t.Run("server-wide override", func(t *testing.T) {
		call := newCall(srv.URL, &mcpgate.Request{Path: "/x"}, `{}`)
		call.Skill.AllowPrivate = false
		if res := mustCall(t, New(&Options{AllowPrivate: true}), call); res.IsError {
			t.Fatalf("result is an error: %s", resultText(res))
		}
	})
}

func TestCallToolFailures(t *testing.T) {
	blocking := mustServe(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	stalling := mustServe(t, func(w http.ResponseWriter, r *http.Request) { // half of its body, then nothing
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "half")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is the point
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	var loop *httptest.Server
	loop = mustServe(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loop.URL+r.URL.Path+"x", http.StatusFound)
	})
	refused := closedAddr(t)
	// failure is the result's Failure: the API could not serve the call
	// (timeout, unavailable), which the audit log and idempotency read.
	tests := []struct {
		name    string
		base    string
		timeout time.Duration
		want    []string
		failure string
	}{
		{"connection refused", "http://" + refused, 0, []string{"Connection to " + refused + " refused."}, mcpgate.EUNAVAILABLE},
		{"timeout", blocking.URL, 50 * time.Millisecond, []string{"Request to " + strings.TrimPrefix(blocking.URL, "http://") + " timed out after 50ms."}, mcpgate.ETIMEOUT},
		{"timeout in the body", stalling.URL, 50 * time.Millisecond, []string{"Request to " + strings.TrimPrefix(stalling.URL, "http://") + " timed out after 50ms."}, mcpgate.ETIMEOUT},
		{"tls", untrusted.URL, 0, []string{"TLS failure with " + strings.TrimPrefix(untrusted.URL, "https://"), "x509"}, ""},
		{"https to plain http", strings.Replace(blocking.URL, "http:", "https:", 1), 0, []string{"failed: http: server gave HTTP response to HTTPS client."}, ""},
		{"too many redirects", loop.URL, 0, []string{"failed: stopped after 10 redirects."}, ""},
		{"ssrf refusal", "http://169.254.169.254", 0, []string{"refused"}, ""},
	}
	b := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := newCall(tt.base, &mcpgate.Request{Path: "/x", Query: secretQuery, Timeout: mcpgate.Duration(tt.timeout)}, `{}`)
			res := mustCall(t, b, call)
			wantError(t, res, tt.want...)
			if res.Failure != tt.failure {
				t.Errorf("Failure = %q, want %q", res.Failure, tt.failure)
			}
		})
	}
}

func TestCallToolSkillTimeout(t *testing.T) {
	srv := mustServe(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	call := newCall(srv.URL, &mcpgate.Request{Path: "/"}, `{}`)
	call.Skill.Timeout = mcpgate.Duration(20 * time.Millisecond)
	wantError(t, mustCall(t, New(nil), call), "timed out after 20ms")
}

func TestCallToolCanceled(t *testing.T) {
	started := make(chan struct{})
	srv := mustServe(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	res, err := New(nil).CallTool(ctx, newCall(srv.URL, &mcpgate.Request{Path: "/"}, `{}`))
	if mcpgate.ErrorCode(err) != mcpgate.ECANCELED {
		t.Fatalf("CallTool = %+v, %v; want an ECANCELED error", res, err)
	}
}

func TestCallToolTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "over tls")
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	guard := netguard.New(&netguard.Options{TLSConfig: &tls.Config{RootCAs: roots}})
	res := mustCall(t, New(&Options{Guard: guard}), newCall(srv.URL, &mcpgate.Request{Path: "/"}, `{}`))
	if res.IsError || resultText(res) != "over tls" {
		t.Fatalf("result = %+v, want the text over tls", res)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"dns", &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}, "DNS lookup of api.example.invalid failed: no such host."},
		{"wrapped dns", fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", Name: "h"}}), "DNS lookup of h failed: server misbehaving."},
		{"deadline", context.DeadlineExceeded, "Request to h:1 timed out after 1s."},
		{"other", errors.New("unexpected EOF"), "Request to h:1 failed: unexpected EOF."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe("h:1", time.Second, tt.err); got != tt.want {
				t.Errorf("describe = %q, want %q", got, tt.want)
			}
		})
	}
}
