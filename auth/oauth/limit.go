package oauth

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// limiter is a token bucket per key (a client address, a user name). It
// holds at most 100,000 buckets: past that it starts afresh, which bounds
// memory against floods of distinct keys.
type limiter struct {
	limit Limit
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

// bucket is one key's tokens, as of last.
type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(l Limit, now func() time.Time) *limiter {
	return &limiter{limit: l, now: now, buckets: map[string]*bucket{}}
}

// allow takes a token from key's bucket, reporting whether there was one.
func (l *limiter) allow(key string) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= 100_000 {
			clear(l.buckets)
		}
		b = &bucket{tokens: float64(l.limit.Burst), last: now}
		l.buckets[key] = b
	}
	b.tokens = min(float64(l.limit.Burst), b.tokens+float64(now.Sub(b.last))/float64(l.limit.Every))
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// clientAddr is the address a request came from, without its port. Behind
// a reverse proxy every request shares the proxy's address, which makes
// the limits apply to all clients together: stricter, never looser.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
