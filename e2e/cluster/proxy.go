package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"syscall"
)

// Proxy is a round-robin reverse proxy over a cluster's replicas, with no
// stickiness: each request goes to the next ready replica, whatever session
// it belongs to. A request whose connection is refused (a replica killed or
// past its drain) is sent to the next replica, as a load balancer does;
// anything else that fails is the client's 502. Responses are streamed as
// they come, flushing after every write, so SSE passes through unbuffered.
// The inbound Host is kept, so the replicas see their public URL's host.
type Proxy struct {
	// Header, when set, is added to every request the proxy forwards (an
	// Authorization for a client that sends none, such as the conformance
	// suite).
	Header http.Header

	mu        sync.Mutex
	replicas  []*Replica
	next      atomic.Uint64
	transport *http.Transport
	rp        *httputil.ReverseProxy
}

// NewProxy returns a proxy over replicas (which SetReplicas may set later).
func NewProxy(replicas []*Replica) *Proxy {
	p := &Proxy{replicas: replicas, transport: http.DefaultTransport.(*http.Transport).Clone()}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       p.rewrite,
		Transport:     p,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "cluster proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	return p
}

// SetReplicas sets the replicas the proxy balances over.
func (p *Proxy) SetReplicas(replicas []*Replica) {
	p.mu.Lock()
	p.replicas = replicas
	p.mu.Unlock()
}

// ServeHTTP forwards r to a replica.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.rp.ServeHTTP(w, r) }

// Close closes the proxy's idle connections to the replicas.
func (p *Proxy) Close() { p.transport.CloseIdleConnections() }

// rewrite keeps the inbound Host and adds Header.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetXForwarded()
	pr.Out.URL.Scheme = "http"
	for name, values := range p.Header {
		pr.Out.Header[name] = values
	}
}

// RoundTrip sends req to the next ready replica, moving on to the following
// one while connections are refused. It implements http.RoundTripper for
// the reverse proxy.
func (p *Proxy) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	last := errors.New("no replica")
	for _, r := range p.order() {
		out := req.Clone(req.Context())
		out.URL.Host = r.Addr
		setBody(out, body)
		resp, err := p.transport.RoundTrip(out)
		if err == nil {
			r.served.Add(1)
			return resp, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("replica %d: %w", r.Index, err)
		}
		r.ready.Store(false)
		last = fmt.Errorf("replica %d: %w", r.Index, err)
	}
	return nil, last
}

// order returns the replicas to try: the ready ones from the next in turn
// on, then the others, in case the probes are behind.
func (p *Proxy) order() []*Replica {
	p.mu.Lock()
	rs := p.replicas
	p.mu.Unlock()
	if len(rs) == 0 {
		return nil
	}
	start := int(p.next.Add(1) % uint64(len(rs)))
	var ready, rest []*Replica
	for i := range rs {
		r := rs[(start+i)%len(rs)]
		if r.Ready() {
			ready = append(ready, r)
		} else {
			rest = append(rest, r)
		}
	}
	return append(ready, rest...)
}

// readBody reads the whole request body, so it can be sent again to another
// replica; nil when there is none.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// setBody gives out a fresh, rewindable copy of body.
func setBody(out *http.Request, body []byte) {
	if body == nil {
		out.Body = nil
		return
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}
