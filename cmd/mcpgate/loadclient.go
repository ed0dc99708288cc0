package main

import (
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpgate/mcpgate/h1"
)

// loadClient returns the HTTP client of a load test's sessions, keeping
// up to conns connections to target alive. A plain http:// target is
// called over h1, which writes each request and reads its response on the
// session's own goroutine and moves the bytes out of the runtime's
// sight, where net/http hands both to goroutines of the connection. The
// load client shares the machine with what it measures: the CPU those
// hand-offs (and the runtime's monitor they wake) cost it is taken from
// the processes under test. HTTPS targets keep net/http.
func loadClient(target string, conns int) *http.Client {
	t := &http.Transport{MaxIdleConnsPerHost: conns}
	c := &http.Client{Transport: t, Timeout: time.Minute}
	if u, err := url.Parse(target); err == nil && u.Scheme == "http" {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		c.Transport = &h1.Transport{Dial: d.DialContext, Next: t, MaxIdlePerHost: conns}
	}
	return c
}
