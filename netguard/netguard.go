// Package netguard guards outbound HTTP against server-side request forgery:
// its clients check every connection's address after name resolution, at
// dial time, so neither a DNS answer nor a redirect can lead a request to
// loopback, private, link-local or cloud metadata addresses unless a policy
// allows it (metadata never). It also checks URLs before use, for config
// validation.
//
// The package imports only the standard library; in particular it must not
// import the root mcpgate package, so that every backend and the config
// validator can use it.
package netguard

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// MaxRedirects is how many redirects a Guard's client follows.
const MaxRedirects = 10

// Options configures a Guard. The zero value, or nil, gives the defaults.
type Options struct {
	// MaxIdleConnsPerHost is how many keep-alive connections each transport
	// keeps per host; default 64.
	MaxIdleConnsPerHost int
	// DialTimeout bounds connecting, per address tried; default 10 s.
	DialTimeout time.Duration
	// TLSConfig, when set, is cloned into each transport, to trust a
	// private CA for instance.
	TLSConfig *tls.Config
}

// Guard holds one HTTP client per policy, each with its own pool of
// keep-alive connections, to be shared by every outbound call.
type Guard struct {
	strict  *http.Client
	private *http.Client
}

// New returns a Guard with clients for the strict and the allow-private
// policy.
func New(opts *Options) *Guard {
	o := withDefaults(opts)
	return &Guard{
		strict:  newClient(Policy{}, Policy{}.Control, o),
		private: newClient(Policy{AllowPrivate: true}, Policy{AllowPrivate: true}.Control, o),
	}
}

// Client returns the shared client for policy p. It does not use the
// environment's proxy, follows at most MaxRedirects redirects to http and
// https URLs only, and has no timeout of its own: bound each request with
// its context. A redirect to another origin drops the headers the request's
// context names with WithSecretHeaders. Callers must not modify the client.
func (g *Guard) Client(p Policy) *http.Client {
	if p.AllowPrivate {
		return g.private
	}
	return g.strict
}

// Dialer returns the dial function of policy p's client: every address
// it connects to passes p's check. A transport of the caller's own (an
// HTTP/1.1 one for plain-HTTP upstreams, say) stays guarded with it.
func (g *Guard) Dialer(p Policy) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return g.Client(p).Transport.(*http.Transport).DialContext
}

// CloseIdleConnections closes the idle keep-alive connections of both
// clients.
func (g *Guard) CloseIdleConnections() {
	g.strict.CloseIdleConnections()
	g.private.CloseIdleConnections()
}

// withDefaults returns a copy of opts with defaults filled in.
func withDefaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = 64
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	return o
}

// dialControl is the type of net.Dialer's Control.
type dialControl = func(network, address string, c syscall.RawConn) error

// newClient returns a client whose connections pass control and whose
// redirects pass p's URL check.
func newClient(p Policy, control dialControl, o Options) *http.Client {
	d := &net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second, Control: control}
	t := &http.Transport{
		Proxy:                 nil, // the guard must see the real target
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * o.MaxIdleConnsPerHost,
		MaxIdleConnsPerHost:   o.MaxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       o.TLSConfig.Clone(),
	}
	return &http.Client{Transport: t, CheckRedirect: p.checkRedirect}
}

// checkRedirect refuses a redirect past the limit or to a URL the policy
// refuses before resolution (the dial check covers the rest), and drops
// the secret headers (WithSecretHeaders) of one that leaves the origin.
func (p Policy) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return ErrTooManyRedirects
	}
	if err := p.Check(req.URL); err != nil {
		return fmt.Errorf("redirect: %w", err)
	}
	dropSecretHeaders(req, via)
	return nil
}
