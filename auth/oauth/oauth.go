// Package oauth is the gateway's own OAuth 2.1 authorization server and the
// check of the access tokens it issues: authorization server metadata
// (RFC 8414, with the OpenID discovery paths clients try), protected
// resource metadata (RFC 9728), dynamic client registration (RFC 7591),
// Client ID Metadata Documents, the authorization code flow with PKCE S256
// and resource indicators (RFC 8707), the login and consent pages, the
// token endpoint with rotating refresh tokens, revocation (RFC 7009), and
// HS256 JWT access tokens whose audience is the agent's MCP URL.
//
// It depends on the root package, auth (password and secret hashing) and
// netguard (the guarded client that fetches metadata documents); it must
// not import a store implementation, the transport, the server or a
// backend.
package oauth

import (
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/netguard"
)

// Scope is the one scope the gateway issues and enforces: calling the
// tools of the agents a token was granted.
const Scope = "mcp"

// Store is what the authorization server needs of the gateway's store.
type Store interface {
	mcpgate.OAuthStore
	FindUserByID(ctx context.Context, id string) (*mcpgate.User, error)
	FindUserByName(ctx context.Context, name string) (*mcpgate.User, error)
	ListAgents(ctx context.Context, f mcpgate.AgentFilter) ([]*mcpgate.Agent, error)
}

// Limit is a rate: Burst requests at once, then one more every Every.
type Limit struct {
	Burst int
	Every time.Duration
}

// Options configure a Server. Store and PublicURL are required.
type Options struct {
	Store Store
	// PublicURL is the gateway's base URL as clients reach it: the issuer,
	// and the base of every absolute URL and resource. It is never guessed
	// from a request's Host.
	PublicURL string
	// HTTPClient fetches Client ID Metadata Documents; default: netguard's
	// strict client, which refuses loopback and private addresses.
	HTTPClient *http.Client
	// AccessTTL is the life of an access token; default 1h.
	AccessTTL time.Duration
	// RefreshTTL is the life of a refresh token; default 30 days.
	RefreshTTL time.Duration
	// CodeTTL is the life of an authorization code; default 60s.
	CodeTTL time.Duration
	// SessionTTL is how long a sign-in on the login page lasts; default 12h.
	SessionTTL time.Duration
	// RevocationTTL bounds how long a token family revoked by another
	// replica keeps working here; default 2s.
	RevocationTTL time.Duration
	// DocumentTTL is how long a fetched client metadata document is
	// cached; default 5m.
	DocumentTTL time.Duration
	// LoginLimit applies per client address and per user name; default
	// 10 at once, then one every 6s.
	LoginLimit Limit
	// RegisterLimit applies per client address; default 20 at once, then
	// one every 30s.
	RegisterLimit Limit
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger is optional; nil discards.
	Logger *slog.Logger
}

// Server is the authorization server. Its handlers are mounted by the
// HTTP server behind the Host/Origin guard (see Handlers); its
// VerifyAccessToken checks tokens for the authenticator.
type Server struct {
	opts     Options
	base     string // canonical public base URL, the issuer
	secure   bool   // cookies are Secure and __Host- prefixed
	keys     *keyring
	families *familyCache
	verified tokenCache
	docs     *documentCache
	loginIP  *limiter
	loginFor *limiter
	register *limiter
	pages    *template.Template
}

// New returns a server, loading its signing keys from the store and making
// the first one when there is none. Returns EINVALID when PublicURL is not
// an absolute http(s) URL.
func New(ctx context.Context, opts *Options) (*Server, error) {
	s := &Server{opts: withDefaults(*opts)}
	base, err := canonicalBase(s.opts.PublicURL)
	if err != nil {
		return nil, err
	}
	s.base = base
	s.secure = secureCookies(base)
	s.keys = &keyring{store: s.opts.Store, now: s.opts.Now}
	if err := s.keys.load(ctx); err != nil {
		return nil, err
	}
	s.families = newFamilyCache(s.opts.Store, s.opts.RevocationTTL, s.opts.Now)
	s.docs = newDocumentCache(s.opts.HTTPClient, s.opts.DocumentTTL, s.opts.Now)
	s.loginIP = newLimiter(s.opts.LoginLimit, s.opts.Now)
	s.loginFor = newLimiter(s.opts.LoginLimit, s.opts.Now)
	s.register = newLimiter(s.opts.RegisterLimit, s.opts.Now)
	s.pages = parsePages()
	return s, nil
}

// withDefaults fills in the options left zero.
func withDefaults(o Options) Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.AccessTTL, time.Hour)
	def(&o.RefreshTTL, 30*24*time.Hour)
	def(&o.CodeTTL, time.Minute)
	def(&o.SessionTTL, 12*time.Hour)
	def(&o.RevocationTTL, 2*time.Second)
	def(&o.DocumentTTL, 5*time.Minute)
	if o.LoginLimit.Burst <= 0 || o.LoginLimit.Every <= 0 {
		o.LoginLimit = Limit{Burst: 10, Every: 6 * time.Second}
	}
	if o.RegisterLimit.Burst <= 0 || o.RegisterLimit.Every <= 0 {
		o.RegisterLimit = Limit{Burst: 20, Every: 30 * time.Second}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = netguard.New(nil).Client(netguard.Policy{})
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Handlers returns the server's handlers by http.ServeMux pattern: the
// metadata documents under /.well-known (with the path-inserted and
// appended variants clients try) and the /oauth endpoints.
func (s *Server) Handlers() map[string]http.Handler {
	asMeta := http.HandlerFunc(s.handleServerMetadata)
	return map[string]http.Handler{
		"GET /.well-known/oauth-protected-resource":               http.HandlerFunc(s.handleResourceMetadata),
		"GET /.well-known/oauth-protected-resource/{agent}/mcp":   http.HandlerFunc(s.handleResourceMetadata),
		"GET /.well-known/oauth-authorization-server":             asMeta,
		"GET /.well-known/oauth-authorization-server/{path...}":   asMeta,
		"GET /.well-known/openid-configuration":                   asMeta,
		"GET /.well-known/openid-configuration/{path...}":         asMeta,
		"GET /{agent}/mcp/.well-known/openid-configuration":       asMeta,
		"GET /{agent}/mcp/.well-known/oauth-authorization-server": asMeta,
		"POST /oauth/register":                                    http.HandlerFunc(s.handleRegister),
		"GET /oauth/authorize":                                    http.HandlerFunc(s.handleAuthorize),
		"POST /oauth/authorize":                                   http.HandlerFunc(s.handleConsent),
		"GET /oauth/login":                                        http.HandlerFunc(s.handleSignInPage),
		"POST /oauth/login":                                       http.HandlerFunc(s.handleLogin),
		"POST /oauth/token":                                       http.HandlerFunc(s.handleToken),
		"POST /oauth/revoke":                                      http.HandlerFunc(s.handleRevoke),
	}
}

// Issuer returns the issuer: the canonical public base URL.
func (s *Server) Issuer() string { return s.base }

// ResourceMetadataURL returns the absolute URL of the protected resource
// metadata of the resource at path ("/{agent}/mcp", or "" for the base).
func (s *Server) ResourceMetadataURL(path string) string {
	return s.base + "/.well-known/oauth-protected-resource" + path
}

// RotateSigningKey adds a new signing key, which signs from now on; tokens
// signed with older keys stay valid until they expire.
func (s *Server) RotateSigningKey(ctx context.Context) error {
	return s.keys.rotate(ctx)
}

// canonicalBase returns the canonical form of the public URL: lower-case
// scheme and host, no query, fragment or trailing slash.
func canonicalBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", mcpgate.Errorf(mcpgate.EINVALID, "public URL %q must be an absolute http(s) URL without query or fragment", raw)
	}
	return canonicalURL(u), nil
}

// canonicalURL returns u's scheme and host in lower case and its escaped
// path without a trailing slash: the form of the issuer and of resources.
func canonicalURL(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/")
}
