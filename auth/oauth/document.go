package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Limits of a Client ID Metadata Document fetch.
const (
	maxDocumentBytes = 16 << 10
	documentTimeout  = 5 * time.Second
)

// isDocumentURL reports whether a client_id is the URL of a Client ID
// Metadata Document: https, with a path, without fragment or credentials.
func isDocumentURL(id string) bool {
	u, err := url.Parse(id)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/" && u.Fragment == "" && u.User == nil
}

// document is the part of a Client ID Metadata Document the gateway uses.
type document struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	LogoURI                 string   `json:"logo_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientSecret            string   `json:"client_secret"`
}

// documentCache fetches Client ID Metadata Documents through the guarded
// client and keeps them, and failures, for a while.
type documentCache struct {
	client *http.Client
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]documentEntry
}

// documentEntry is one fetch's outcome.
type documentEntry struct {
	client  *mcpgate.OAuthClient
	err     error
	expires time.Time
}

// newDocumentCache returns a cache fetching with a copy of c that does not
// follow redirects: the Client ID Metadata Document draft says the
// authorization server MUST NOT, and a redirect answers as an error.
func newDocumentCache(c *http.Client, ttl time.Duration, now func() time.Time) *documentCache {
	noRedirects := *c
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &documentCache{client: &noRedirects, ttl: ttl, now: now, entries: map[string]documentEntry{}}
}

// get returns the client the document at id describes. Failures are
// cached for a tenth of the TTL, so that a bad document cannot make the
// gateway fetch on every request.
func (d *documentCache) get(ctx context.Context, id string) (*mcpgate.OAuthClient, error) {
	now := d.now()
	d.mu.Lock()
	e, ok := d.entries[id]
	d.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.client, e.err
	}
	c, err := d.fetch(ctx, id)
	if err != nil && ctx.Err() != nil {
		// The caller hung up: the failure says nothing about the
		// document, and caching it would refuse the client to every user
		// for a while.
		return nil, err
	}
	e = documentEntry{client: c, err: err, expires: now.Add(d.ttl)}
	if err != nil {
		e.expires = now.Add(d.ttl / 10)
	}
	d.mu.Lock()
	if len(d.entries) > 10_000 {
		clear(d.entries)
	}
	d.entries[id] = e
	d.mu.Unlock()
	return c, err
}

// fetch downloads and checks the document at id.
func (d *documentCache) fetch(ctx context.Context, id string) (*mcpgate.OAuthClient, error) {
	ctx, cancel := context.WithTimeout(ctx, documentTimeout)
	defer cancel()
	body, err := d.download(ctx, id)
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "client metadata document %s: %v", id, err)
	}
	var doc document
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "client metadata document %s is not JSON: %v", id, err)
	}
	if problem := doc.check(id); problem != "" {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "client metadata document %s: %s", id, problem)
	}
	return &mcpgate.OAuthClient{ID: id, Name: doc.ClientName, RedirectURIs: doc.RedirectURIs,
		AuthMethod: mcpgate.AuthMethodNone, ClientURI: doc.ClientURI, LogoURI: doc.LogoURI}, nil
}

// download GETs url, never reaching anywhere private (the client's
// policy) nor following a redirect, and reads at most maxDocumentBytes.
func (d *documentCache) download(ctx context.Context, id string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch answered %s", resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("content type is %q, want application/json", mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(body) > maxDocumentBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxDocumentBytes)
	}
	return body, nil
}

// check returns what makes the document unusable for the client at id,
// "" when nothing does.
func (doc *document) check(id string) string {
	switch {
	case doc.ClientID != id:
		return fmt.Sprintf("client_id %q differs from the document's URL", doc.ClientID)
	case doc.ClientSecret != "":
		return "a client metadata document must not hold a client_secret"
	case doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != mcpgate.AuthMethodNone:
		return fmt.Sprintf("token_endpoint_auth_method %q is not supported; use none", doc.TokenEndpointAuthMethod)
	case len(doc.RedirectURIs) == 0:
		return "redirect_uris is required"
	}
	for _, u := range doc.RedirectURIs {
		if p := checkRedirectURI(u); p != "" {
			return p
		}
	}
	return ""
}
