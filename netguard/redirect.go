package netguard

import (
	"context"
	"net/http"
)

// secretHeadersKey is the context key of a request's []string of header
// names whose values hold secrets.
type secretHeadersKey struct{}

// WithSecretHeaders returns a copy of ctx under which a request made with a
// Guard's client drops the named headers when a redirect leaves the origin
// (scheme, host and port) of the request's first URL, so that secrets meant
// for one server never reach another. Go's client itself drops only
// Authorization and cookies, and only across domains.
func WithSecretHeaders(ctx context.Context, names []string) context.Context {
	if len(names) == 0 {
		return ctx
	}
	return context.WithValue(ctx, secretHeadersKey{}, names)
}

// dropSecretHeaders removes from a redirected request the headers its
// context names as secret, when the redirect leaves the first origin.
func dropSecretHeaders(req *http.Request, via []*http.Request) {
	from := via[0].URL
	if req.URL.Scheme == from.Scheme && req.URL.Host == from.Host {
		return
	}
	names, _ := req.Context().Value(secretHeadersKey{}).([]string)
	for _, name := range names {
		req.Header.Del(name)
	}
}
