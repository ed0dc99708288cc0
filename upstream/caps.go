package upstream

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// clientCaps is what the gateway declares upstream on a session: only what
// the MCP host behind it can answer, nothing on a pooled session. Each
// declared capability is the host's own object.
type clientCaps struct {
	Roots       json.RawMessage `json:"roots,omitempty"`
	Sampling    json.RawMessage `json:"sampling,omitempty"`
	Elicitation json.RawMessage `json:"elicitation,omitempty"`
}

// hostCaps reads the capabilities an MCP host declared, keeping those the
// gateway relays. Capabilities that cannot name one are not decoded: most
// hosts declare none of them, and every relayed call asks (sessionFor).
func hostCaps(caps json.RawMessage) clientCaps {
	if !mayNameRelayed(caps) {
		return clientCaps{}
	}
	return decodeHostCaps(caps)
}

// decodeHostCaps is hostCaps, decoding caps.
func decodeHostCaps(caps json.RawMessage) clientCaps {
	var in clientCaps
	if len(caps) == 0 || json.Unmarshal(caps, &in) != nil {
		return clientCaps{}
	}
	out := clientCaps{}
	if isObject(in.Roots) {
		// The gateway relays roots/list, not the host's list_changed.
		out.Roots = json.RawMessage(`{}`)
	}
	if isObject(in.Sampling) {
		out.Sampling = in.Sampling
	}
	if isObject(in.Elicitation) {
		out.Elicitation = in.Elicitation
	}
	return out
}

// relayedNames are the names of the capabilities the gateway relays.
var relayedNames = [][]byte{[]byte("roots"), []byte("sampling"), []byte("elicitation")}

// mayNameRelayed reports whether caps may name a capability the gateway
// relays as encoding/json reads names: one of them in quotes, in any case,
// or an escape or a non-ASCII letter that could spell one.
func mayNameRelayed(caps json.RawMessage) bool {
	for i, c := range caps {
		switch {
		case c == '\\' || c >= utf8.RuneSelf:
			return true
		case c == '"' && startsWithRelayedName(caps[i+1:]):
			return true
		}
	}
	return false
}

// startsWithRelayedName reports whether b starts with a relayed
// capability's name, in any case, and its closing quote.
func startsWithRelayedName(b []byte) bool {
	for _, name := range relayedNames {
		if len(b) > len(name) && b[len(name)] == '"' && bytes.EqualFold(b[:len(name)], name) {
			return true
		}
	}
	return false
}

// any reports whether c declares anything.
func (c clientCaps) any() bool { return c.Roots != nil || c.Sampling != nil || c.Elicitation != nil }

// raw is c as the capabilities of initialize.
func (c clientCaps) raw() json.RawMessage { return mustJSON(c) }

// declares reports whether c covers what a server→client request needs.
func (c clientCaps) declares(method string) bool {
	switch method {
	case "sampling/createMessage":
		return c.Sampling != nil
	case "elicitation/create":
		return c.Elicitation != nil
	case "roots/list":
		return c.Roots != nil
	}
	return false
}

// wantsOwnSession reports whether a host's capabilities call for an
// upstream session of its own.
func wantsOwnSession(c mcpgate.ClientRequester) bool {
	return c != nil && hostCaps(c.ClientCapabilities()).any()
}

// scoped is a ClientRequester whose requests belong to one call outside
// any MCP session (the transport's 2026-07-28 calls that may ask the
// client for input): ScopeID names the call, "" when it has no scope.
type scoped interface {
	ScopeID() string
}

// scopeOf returns the scope of client, "" when it has none.
func scopeOf(client mcpgate.ClientRequester) string {
	if sc, ok := client.(scoped); ok {
		return sc.ScopeID()
	}
	return ""
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '{'
}

// serverCaps is the part of an upstream's capabilities the gateway reads.
type serverCaps struct {
	Resources *struct {
		Subscribe   bool `json:"subscribe"`
		ListChanged bool `json:"listChanged"`
	} `json:"resources"`
	Prompts *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"prompts"`
	Completions *struct{} `json:"completions"`
	Logging     *struct{} `json:"logging"`
}

// parseServerCaps reads an upstream's capabilities object.
func parseServerCaps(raw json.RawMessage) *serverCaps {
	c := &serverCaps{}
	_ = json.Unmarshal(raw, c)
	return c
}
