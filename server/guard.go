package server

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcp"
)

// guard validates Host and Origin against DNS rebinding and cross-site
// requests: a browser page on a foreign site must not reach the gateway.
type guard struct {
	base     string          // the public base URL, without a trailing slash
	hosts    map[string]bool // allowed host names, lower case, without port
	origins  map[string]bool // allowed origins, exactly "scheme://host[:port]"
	loopback bool            // the public URL is on loopback: local pages on any port may call
}

// loopbackNames are always allowed when the public URL is on loopback.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// newGuard allows the public URL's host (and the loopback names when that
// host is a loopback one) plus the configured extras.
func newGuard(publicURL string, hosts, origins []string) (*guard, error) {
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "public URL %q must be an absolute http(s) URL", publicURL)
	}
	g := &guard{base: strings.TrimRight(publicURL, "/"), hosts: map[string]bool{}, origins: map[string]bool{}}
	g.allowHost(u.Hostname())
	g.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	if g.loopback = isLoopback(u.Hostname()); g.loopback {
		for _, n := range loopbackNames {
			g.allowHost(n)
		}
	}
	for _, h := range hosts {
		g.allowHost(hostOnly(h))
	}
	for _, o := range origins {
		ou, err := url.Parse(o)
		if err != nil || ou.Host == "" {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "allowed origin %q must look like https://app.example.com", o)
		}
		g.origins[strings.ToLower(ou.Scheme+"://"+ou.Host)] = true
	}
	return g, nil
}

// allowHost adds a host name.
func (g *guard) allowHost(h string) { g.hosts[strings.ToLower(strings.Trim(h, "[]"))] = true }

// wrap refuses requests with a foreign Host or Origin with 403, and lets
// browsers on allowed origins in with CORS: preflights are answered here,
// before authentication, as the Fetch standard requires.
func (g *guard) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := g.check(r); err != nil {
			mcp.WriteHTTPError(w, err)
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			h.ServeHTTP(w, r)
			return
		}
		hdr := w.Header()
		hdr.Set("Access-Control-Allow-Origin", origin)
		hdr.Add("Vary", "Origin")
		hdr.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hdr.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
			hdr.Set("Access-Control-Allow-Headers", corsHeaders)
			hdr.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// corsHeaders are the request headers an MCP client in a browser sends;
// Mcp-Method and Mcp-Name are required on every 2026-07-28 request.
const corsHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, X-Agent-API-Key"

// check returns EFORBIDDEN for a foreign Host or Origin.
func (g *guard) check(r *http.Request) error {
	if err := g.checkHost(r); err != nil {
		return err
	}
	origin := r.Header.Get("Origin")
	if origin == "" || g.origins[strings.ToLower(origin)] || (g.loopback && isLoopbackOrigin(origin)) {
		return nil
	}
	return mcpgate.Errorf(mcpgate.EFORBIDDEN, "origin %q is not allowed; add it with --allowed-origins", origin)
}

// checkHost returns EFORBIDDEN for a foreign Host.
func (g *guard) checkHost(r *http.Request) error {
	if host := hostOnly(r.Host); !g.hosts[host] {
		return mcpgate.Errorf(mcpgate.EFORBIDDEN, "host %q is not served here; set --public-url or --allowed-hosts to the name clients use", host)
	}
	return nil
}

// isLoopbackOrigin reports whether an Origin is a page served from this
// machine (any scheme and port), such as a local MCP Inspector.
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && isLoopback(u.Hostname())
}

// hostOnly strips the port from a Host value and lowercases it.
func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

// isLoopback reports whether a host name is a loopback name or address.
func isLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// PublicURLFor returns the public URL a server listening on addr would
// have: loopback and unspecified hosts become 127.0.0.1.
func PublicURLFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return fmt.Sprintf("http://%s", net.JoinHostPort(host, port))
}
