package rest

import "net/http"

// secretHeadersKey is the context key of a request's []string of header
// names whose values hold secrets.
type secretHeadersKey struct{}

// withSecretStripping returns a copy of c that, on a redirect to another
// origin (scheme, host or port), drops the headers that hold secrets, so
// that a backend cannot send the gateway's API keys elsewhere. Go's client
// drops only Authorization and cookies, and only across domains.
func withSecretStripping(c *http.Client) *http.Client {
	next := c.CheckRedirect
	stripping := *c
	stripping.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if next != nil {
			if err := next(req, via); err != nil {
				return err
			}
		}
		if from := via[0].URL; req.URL.Scheme != from.Scheme || req.URL.Host != from.Host {
			names, _ := req.Context().Value(secretHeadersKey{}).([]string)
			for _, name := range names {
				req.Header.Del(name)
			}
		}
		return nil
	}
	return &stripping
}
