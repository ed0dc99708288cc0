package server

import (
	"net/http"
	"net/url"
	"strings"
)

// mcpPattern is the pattern of the MCP endpoints.
const mcpPattern = "/{agent}/mcp"

// routeMux is the route table: an http.ServeMux, in front of which a
// shortcut serves a request to an MCP endpoint without the mux's lookup
// among every pattern (a hundredth of a relayed call's CPU). It takes the
// shortcut only where the mux would choose the MCP pattern too: for a
// clean path /{agent}/mcp whose first segment no other pattern names
// literally, while no other pattern names a host or starts with a
// wildcard and could match such a path. Every pattern goes through
// Handle (the mux itself is not exposed, so that none can be registered
// unseen).
type routeMux struct {
	mux    *http.ServeMux
	mcp    http.Handler    // the handler of mcpPattern, once registered
	others map[string]bool // the literal first segments of the other patterns
	wild   bool            // another pattern names a host, or starts with a wildcard and may match /{agent}/mcp
}

// newRouteMux returns an empty route table.
func newRouteMux() *routeMux {
	return &routeMux{mux: http.NewServeMux(), others: map[string]bool{}}
}

// Handle registers h for pattern, as http.ServeMux.Handle.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.mux.Handle(pattern, h)
	m.note(pattern, h)
}

// note records what the shortcut needs to know of pattern.
func (m *routeMux) note(pattern string, h http.Handler) {
	path := pattern
	if _, rest, ok := strings.Cut(pattern, " "); ok {
		path = strings.TrimLeft(rest, " \t")
	}
	switch {
	case path == mcpPattern && path == pattern:
		m.mcp = h
	case !strings.HasPrefix(path, "/"): // a host
		m.wild = true
	case path == "/":
	default:
		first, _, _ := strings.Cut(path[1:], "/")
		if !strings.HasPrefix(first, "{") {
			m.others[first] = true
		} else if mayMatchMCP(path) {
			m.wild = true
		}
	}
}

// mayMatchMCP reports whether path, the path of a pattern, could match a
// path of two segments whose second is "mcp", as an MCP endpoint's. Such
// a pattern that starts with a wildcard turns the shortcut off; one that
// cannot match (the gateway's /{agent}/mcp/.well-known/… documents) does
// not.
func mayMatchMCP(path string) bool {
	segs := strings.Split(path[1:], "/")
	for i, seg := range segs {
		switch {
		case strings.HasSuffix(seg, "...}"): // the rest of the path
			return true
		case seg == "" && i == len(segs)-1: // a trailing slash: a subtree
			return i < 2
		case seg == "{$}", i >= 2: // a path ending in a slash, or a longer one
			return false
		case i == 1 && !strings.HasPrefix(seg, "{") && unescape(seg) != "mcp":
			return false
		}
	}
	return len(segs) == 2
}

// unescape is a pattern's literal segment as the ServeMux reads it.
func unescape(seg string) string {
	if s, err := url.PathUnescape(seg); err == nil {
		return s
	}
	return seg
}

// ServeHTTP serves r, through the shortcut when it applies.
func (m *routeMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if agent, ok := m.mcpAgent(r); ok {
		r.Pattern = mcpPattern
		r.SetPathValue("agent", agent)
		m.mcp.ServeHTTP(w, r)
		return
	}
	m.mux.ServeHTTP(w, r)
}

// mcpAgent returns the agent of a request the shortcut serves.
func (m *routeMux) mcpAgent(r *http.Request) (string, bool) {
	if m.mcp == nil || m.wild || r.Method == http.MethodConnect || r.URL.RawPath != "" {
		return "", false
	}
	agent, ok := strings.CutSuffix(r.URL.Path, "/mcp")
	if !ok || !strings.HasPrefix(agent, "/") {
		return "", false
	}
	agent = agent[1:]
	if agent == "" || agent == "." || agent == ".." || strings.Contains(agent, "/") || m.others[agent] {
		return "", false
	}
	return agent, true
}
