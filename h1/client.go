package h1

import (
	"context"
	"net"
	"net/http"
)

// Client returns a copy of c whose plain-HTTP requests go over a new
// Transport that connects with dial, and whose other requests go over c's
// own transport (http.DefaultTransport when it has none). The copy keeps
// c's redirect policy, cookie jar and timeout.
func Client(c *http.Client, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	cc := *c
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cc.Transport = &Transport{Dial: dial, Next: next}
	return &cc
}
