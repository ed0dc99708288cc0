package mcpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// StatelessVersion is the stateless revision of the protocol: no
// initialize and no session, every request carrying the client's version
// and capabilities in its _meta and its method and name in HTTP headers.
// Over Streamable HTTP the client asks for it first, with server/discover,
// and falls back to initialize (ProtocolVersion and older) when the server
// does not offer it.
const StatelessVersion = "2026-07-28"

// Keys of _meta the stateless revision reserves.
const (
	metaVersion  = "io.modelcontextprotocol/protocolVersion"
	metaCaps     = "io.modelcontextprotocol/clientCapabilities"
	metaInfo     = "io.modelcontextprotocol/clientInfo"
	metaLogLevel = "io.modelcontextprotocol/logLevel"
)

// discoverTimeout bounds the wait for the answer to server/discover.
const discoverTimeout = 10 * time.Second

// errAccepted is the error of a request a server took as a notification
// (HTTP 202): no answer will come, as from an old server asked for
// server/discover.
var errAccepted = errors.New("the server accepted the request without answering it (HTTP 202)")

// Stateless reports whether the session speaks StatelessVersion.
func (s *Session) Stateless() bool { return s.stateless }

// discover asks the server, with server/discover, whether it speaks
// StatelessVersion; false (and no error) means that initialize should
// follow. Only Streamable HTTP tries: over stdio the revision would need
// the same probe on a stream an old server may answer with nothing.
func (s *Session) discover(ctx context.Context) bool {
	ht, ok := s.t.(*httpTransport)
	if !ok || s.opts.Legacy {
		return false
	}
	ht.negotiated(StatelessVersion)
	s.stateless, s.ver = true, StatelessVersion
	// A server that leaves the probe unanswered must not use up the
	// time initialize needs.
	dctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	res, err := s.Call(dctx, "server/discover", json.RawMessage(`{}`), nil)
	if err == nil && offers(res, StatelessVersion) {
		s.init = res
		return true
	}
	s.log.Debug("mcpclient: the upstream does not speak the stateless revision; initializing", "err", err)
	s.stateless, s.ver = false, ""
	ht.reset()
	return false
}

// versionRefused reports whether err is a stateless server's refusal of
// the revision (-32022, unsupported protocol version): a server replaced
// by one of another revision. The session then ends, so that its owner
// connects again and negotiates anew.
func (s *Session) versionRefused(err error) bool {
	var rpc *mcpgate.RPCError
	return s.stateless && errors.As(err, &rpc) && rpc.Code == -32022
}

// offers reports whether a server/discover result lists version among its
// supportedVersions.
func offers(res json.RawMessage, version string) bool {
	var r struct {
		Supported []string `json:"supportedVersions"`
	}
	return json.Unmarshal(res, &r) == nil && slices.Contains(r.Supported, version)
}

// statelessRequest returns a request's params with the _meta the
// revision requires (the version, the client's info and capabilities,
// the log level) merged into the caller's, and its options with the
// Mcp-Method and Mcp-Name headers.
func (s *Session) statelessRequest(method string, params json.RawMessage, opts *CallOptions) (json.RawMessage, *CallOptions, error) {
	var p map[string]json.RawMessage
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, nil, fmt.Errorf("%s: params are not an object: %w", method, err)
		}
	}
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	p["_meta"] = s.requestMeta(p["_meta"], opts.Capabilities)
	out, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	o := *opts
	o.Header = http.Header{}
	for k, v := range opts.Header {
		o.Header[k] = v
	}
	o.Header["Mcp-Method"] = []string{method}
	if name, ok := nameOf(method, p); ok {
		o.Header["Mcp-Name"] = []string{headerValue(name)}
	}
	return out, &o, nil
}

// requestMeta returns the caller's _meta (raw, possibly empty) with the
// members the revision requires of every request; caps are the
// request's own capabilities, the session's when empty.
func (s *Session) requestMeta(raw, caps json.RawMessage) json.RawMessage {
	meta := map[string]json.RawMessage{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &meta)
	}
	if len(caps) == 0 {
		caps = s.opts.Capabilities
	}
	meta[metaVersion] = json.RawMessage(`"` + StatelessVersion + `"`)
	meta[metaCaps] = caps
	meta[metaInfo], _ = json.Marshal(map[string]string{"name": s.opts.Name, "version": s.opts.Version})
	if s.opts.LogLevel != "" {
		meta[metaLogLevel], _ = json.Marshal(s.opts.LogLevel)
	}
	out, _ := json.Marshal(meta)
	return out
}

// nameOf returns what a request's Mcp-Name header carries: the name of a
// tool or prompt, the URI of a resource.
func nameOf(method string, p map[string]json.RawMessage) (string, bool) {
	field := ""
	switch method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	default:
		return "", false
	}
	var v string
	if json.Unmarshal(p[field], &v) != nil {
		return "", false
	}
	return v, true
}

// headerValue is v as an HTTP header value: as it is when it is visible
// ASCII (and spaces inside), else in the revision's =?base64?…?= form.
func headerValue(v string) string {
	plain := utf8.ValidString(v) && v == string(bytes.TrimSpace([]byte(v)))
	for i := 0; plain && i < len(v); i++ {
		plain = v[i] >= 0x20 && v[i] < 0x7f
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// reset forgets what a failed server/discover left: the stateless
// version, and a session id a server may have handed out with its
// refusal.
func (t *httpTransport) reset() {
	t.mu.Lock()
	t.version, t.session = "", ""
	t.versionHdr, t.sessionHdr = nil, nil
	t.mu.Unlock()
}

// isStateless reports whether the transport speaks StatelessVersion.
func (t *httpTransport) isStateless() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.version == StatelessVersion
}

// rpcRefusal returns the JSON-RPC error a stateless server refused a
// request with (the revision answers errors such as an unknown method or a
// header mismatch with a 4xx status and the error as the body), nil when
// the body is not one.
func rpcRefusal(rp *httpReply) error {
	mt := mediaType(rp.contentType)
	if mt != "application/json" {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(rp.body, 64<<10))
	var m struct {
		Error *mcpgate.RPCError `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || m.Error == nil {
		return &StatusError{Status: rp.status, Text: string(bytes.TrimSpace(body[:min(len(body), 300)]))}
	}
	return m.Error
}
