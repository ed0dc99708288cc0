package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// modernVersion is the stateless protocol revision: no initialize, no
// session, every request carrying its version and the client's
// capabilities in params._meta.
const modernVersion = "2026-07-28"

// Error codes the 2026-07-28 revision defines (its basic/index, "Error
// Codes"): header/body disagreement, and a version the server does not
// implement.
const (
	codeHeaderMismatch     = -32020
	codeUnsupportedVersion = -32022
)

// The reserved _meta keys of a 2026-07-28 request (basic/index,
// "Per-request protocol fields"): the version and the capabilities are
// required, clientInfo and logLevel optional.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaLogLevel        = "io.modelcontextprotocol/logLevel"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
)

// noLogs is a log level above every severity: a 2026-07-28 request that
// names no logLevel gets no notifications/message (logging is opt-in per
// request in that revision).
const noLogs = 8

// modern reports whether protocol version v is served statelessly.
func modern(v string) bool { return v == modernVersion }

// statelessMethods are the methods a 2026-07-28 request may name, besides
// the relayed ones (see statelessKnown). ping and logging/setLevel were
// removed by that revision, as were resources/subscribe and unsubscribe.
var statelessMethods = map[string]bool{"server/discover": true, "tools/list": true, "tools/call": true, "subscriptions/listen": true}

// stateless reports whether a POST is served statelessly: its
// MCP-Protocol-Version header names 2026-07-28, or names a version the
// server does not speak on a request that is neither in a session nor an
// initialize (such a request gets the revision's UnsupportedProtocolVersion
// error, which tells a modern client what to retry with). Everything else
// keeps the session-based handling of the older revisions.
func stateless(r *http.Request, m *message) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	if modern(v) {
		return true
	}
	return v != "" && !supported(v) && r.Header.Get("Mcp-Session-Id") == "" && m.method != "initialize"
}

// requestProtocol is what a 2026-07-28 request says of itself in
// params._meta.
type requestProtocol struct {
	version    string
	clientCaps json.RawMessage
	clientName string
	level      int
}

// statelessFailure is a request refused before it runs: the HTTP status
// and the JSON-RPC error.
type statelessFailure struct {
	status int
	err    *rpcError
}

// serveStateless serves one 2026-07-28 POST: no session is looked up or
// issued, the headers are checked against the body, and the request runs
// with a request-scoped liveSession whose context ends when the client
// closes the connection (the revision's cancellation signal on HTTP).
func (s *Server) serveStateless(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential, acc accepts, msgs []*message, batch bool) {
	m := msgs[0]
	switch {
	case batch:
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: protocol version 2026-07-28 takes one JSON-RPC message per POST"})
		return
	case m.kind == kindInvalid:
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: " + m.problem})
		return
	case m.kind == kindResponse:
		writeRPCError(w, http.StatusBadRequest, &rpcError{Code: codeInvalidRequest, Message: "Invalid Request: in protocol version 2026-07-28 clients send no JSON-RPC responses"})
		return
	case m.kind == kindNotification:
		w.WriteHeader(http.StatusAccepted) // the revision defines none over HTTP; accepted and ignored
		return
	}
	proto, fail := s.checkStateless(r, agent, m)
	if fail != nil {
		writeJSON(w, fail.status, appendError(nil, m.ID, fail.err))
		return
	}
	if s.relays(m.method) {
		m.Params = stripProtocolMeta(m.Params)
	}
	ls, done := s.statelessSession(r, agent, cred, proto)
	defer done()
	switch {
	case s.multiRound(m, proto):
		s.serveMultiRound(w, r, ls, agent, cred, acc, m, proto)
	case m.method == "server/discover":
		s.reply(w, r, ls, acc, s.discover(r, ls, agent, m))
	case m.method == "subscriptions/listen":
		s.listen(w, ls, agent, cred, m)
	case s.streamed(m.method):
		s.serveStreamed(w, r, ls, agent, cred, acc, m)
	default:
		s.reply(w, r, ls, acc, s.answer(r, ls, agent, m))
	}
}

// checkStateless applies the revision's HTTP rules (basic/transports/
// streamable-http, "Request Metadata" and "Server Validation") in this
// order: a version the server does not implement is 400 with -32022; the
// required _meta fields missing is 400 with -32602 (basic/index); the
// header's version differing from _meta's, or Mcp-Method or (for the
// methods that name something) Mcp-Name missing or differing from the body,
// is 400 with -32020; a method the server does not implement is 404 with
// -32601; and a tools/call's Mcp-Param-* headers must match its arguments
// (checkParamHeaders), else 400 with -32020.
func (s *Server) checkStateless(r *http.Request, agent *mcpgate.Agent, m *message) (*requestProtocol, *statelessFailure) {
	hv := r.Header.Get("Mcp-Protocol-Version")
	if !modern(hv) {
		return nil, unsupportedVersion(hv)
	}
	proto, params, err := readProtocol(m.Params)
	if err != nil {
		return nil, &statelessFailure{http.StatusBadRequest, toRPCError(err)}
	}
	if proto.version != hv {
		return nil, mismatch(fmt.Sprintf("MCP-Protocol-Version header %q does not match _meta %s %q", hv, metaProtocolVersion, proto.version))
	}
	if f := checkHeaders(r, m, params); f != nil {
		return nil, f
	}
	if !s.statelessKnown(r.Context(), agent, m.method) {
		return nil, &statelessFailure{http.StatusNotFound, &rpcError{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: %q", m.method)}}
	}
	if m.method == "tools/call" {
		name, _ := jsonString(params.Name)
		if f := s.checkParamHeaders(r.Context(), r, agent, name, m.Params); f != nil {
			return nil, f
		}
	}
	return proto, nil
}

// statelessKnown reports whether a 2026-07-28 request to agent may name
// method: a relayed method only when the agent has its capability, so that
// prompts/list on an agent without prompts is the revision's 404 too.
func (s *Server) statelessKnown(ctx context.Context, agent *mcpgate.Agent, method string) bool {
	if statelessMethods[method] {
		return true
	}
	if !s.relays(method) || method == "resources/subscribe" || method == "resources/unsubscribe" {
		return false
	}
	caps, err := s.relayer.Capabilities(ctx, agent)
	if err != nil {
		return true // relay reports the error itself
	}
	c := caps[relayedMethods[method]]
	return c != nil && string(c) != "null"
}

// unsupportedVersion is the revision's UnsupportedProtocolVersionError:
// data lists the versions served and echoes the requested one (schema
// UnsupportedProtocolVersionError).
func unsupportedVersion(requested string) *statelessFailure {
	data := struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{append([]string{modernVersion}, strings.Split(supportedVersions, ", ")...), requested}
	msg := fmt.Sprintf("Unsupported protocol version %q; supported versions: %s, %s", requested, modernVersion, supportedVersions)
	return &statelessFailure{http.StatusBadRequest, &rpcError{Code: codeUnsupportedVersion, Message: msg, Data: data}}
}

// mismatch is the revision's HeaderMismatch error (400, -32020).
func mismatch(msg string) *statelessFailure {
	return &statelessFailure{http.StatusBadRequest, &rpcError{Code: codeHeaderMismatch, Message: "Header mismatch: " + msg}}
}

// protocolMeta is the part of params._meta readProtocol decodes.
type protocolMeta struct {
	Version    *string         `json:"io.modelcontextprotocol/protocolVersion"`
	Caps       json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	LogLevel   *string         `json:"io.modelcontextprotocol/logLevel"`
	ClientInfo struct {
		Name string `json:"name"`
	} `json:"io.modelcontextprotocol/clientInfo"`
}

// statelessParams is what the transport reads of a 2026-07-28 request's
// params, in one pass: _meta, and the members Mcp-Name mirrors.
type statelessParams struct {
	Meta protocolMeta    `json:"_meta"`
	Name json.RawMessage `json:"name"`
	URI  json.RawMessage `json:"uri"`
}

// readProtocol reads the per-request protocol fields of params._meta: the
// version (a string) and the client capabilities (an object) must be there;
// a logLevel must be a known level. It also returns the params.
func readProtocol(params json.RawMessage) (*requestProtocol, *statelessParams, error) {
	var p statelessParams
	if err := unmarshalParams(params, &p); err != nil {
		return nil, nil, err
	}
	switch {
	case p.Meta.Version == nil:
		return nil, nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: a 2026-07-28 request needs params._meta[%q]", metaProtocolVersion)
	case firstByte(p.Meta.Caps) != '{':
		return nil, nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: a 2026-07-28 request needs params._meta[%q], an object", metaClientCaps)
	}
	proto := &requestProtocol{version: *p.Meta.Version, clientCaps: p.Meta.Caps, clientName: p.Meta.ClientInfo.Name, level: noLogs}
	if p.Meta.LogLevel != nil {
		if proto.level = levelIndex(*p.Meta.LogLevel); proto.level < 0 {
			return nil, nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: unknown %s %q: use debug, info, notice, warning, error, critical, alert or emergency", metaLogLevel, *p.Meta.LogLevel)
		}
	}
	return proto, &p, nil
}

// named reports whether method needs an Mcp-Name header, and returns the
// params member it mirrors: params.uri for resources/read, params.name for
// tools/call and prompts/get.
func named(method string, p *statelessParams) (json.RawMessage, bool) {
	switch method {
	case "tools/call", "prompts/get":
		return p.Name, true
	case "resources/read":
		return p.URI, true
	}
	return nil, false
}

// checkHeaders checks Mcp-Method against the body's method, and Mcp-Name
// against params.name or params.uri for the methods that need one. Header
// names are case-insensitive, values are not; an Mcp-Name in the Base64
// sentinel form is decoded before the comparison.
func checkHeaders(r *http.Request, m *message, p *statelessParams) *statelessFailure {
	hm, ok := singleHeader(r, "Mcp-Method")
	switch {
	case !ok:
		return mismatch("the Mcp-Method header is required, once")
	case hm != m.method:
		return mismatch(fmt.Sprintf("Mcp-Method header value %q does not match body value %q", hm, m.method))
	}
	member, ok := named(m.method, p)
	if !ok {
		return nil
	}
	hn, ok := singleHeader(r, "Mcp-Name")
	if !ok {
		return mismatch("the Mcp-Name header is required, once, for " + m.method)
	}
	hn, ok = decodeHeaderValue(hn)
	if !ok {
		return mismatch("the Mcp-Name header is not a valid =?base64?…?= value")
	}
	if body, _ := jsonString(member); hn != body {
		return mismatch(fmt.Sprintf("Mcp-Name header value %q does not match body value %q", hn, body))
	}
	return nil
}

// singleHeader returns the one value of header name; ok is false when it
// is absent or repeated.
func singleHeader(r *http.Request, name string) (string, bool) {
	vs := r.Header.Values(name)
	if len(vs) != 1 {
		return "", false
	}
	return vs[0], true
}

// decodeHeaderValue undoes the revision's Base64 sentinel encoding
// ("=?base64?" + standard Base64 of the UTF-8 value + "?="); other values
// are taken as they are.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// statelessSession returns the request-scoped stand-in for a session that
// a 2026-07-28 request runs with: no id (so audit records, upstream calls
// and agent channels see a call outside any session, as HandsAI's are), the
// request's version and log level, and a context that ends when the client
// closes the connection or the Server closes. Its client capabilities stay
// empty: server→client requests (sampling, elicitation, roots) cannot go
// on this request's stream in this revision; a caller that can answer them
// runs as a held call instead (multiRound). done releases it.
func (s *Server) statelessSession(r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential, proto *requestProtocol) (*liveSession, func()) {
	ctx, cancel := context.WithCancelCause(r.Context())
	stop := context.AfterFunc(s.base, func() { cancel(context.Canceled) })
	now := s.now()
	ls := &liveSession{
		agentID: agent.ID, identity: cred.Identity(), version: proto.version,
		ctx: ctx, cancel: cancel, seenAt: now, checkedAt: now, usedAt: now,
	}
	ls.level.Store(int32(proto.level))
	return ls, func() {
		stop()
		cancel(nil)
	}
}

// discover answers server/discover (server/discover in the revision): the
// versions served, the agent's capabilities as a 2026-07-28 client may use
// them, its instructions, and caching hints.
func (s *Server) discover(r *http.Request, ls *liveSession, agent *mcpgate.Agent, m *message) []byte {
	start := s.now()
	ctx, span := s.startSpan(r, ls, agent, m)
	result, err := s.discoverResult(ctx, agent)
	a := &access{err: err}
	s.endSpan(span, a)
	s.logAccess(ctx, ls, agent, m.method, a, start)
	if err != nil {
		return s.errorResponse(ls, m, err)
	}
	return appendResult(nil, m.ID, s.modernResult(m.method, result))
}

// discoverResult encodes the DiscoverResult's own members; modernResult
// adds resultType, the caching hints and serverInfo.
func (s *Server) discoverResult(ctx context.Context, agent *mcpgate.Agent) ([]byte, error) {
	caps, err := s.serverCapabilities(ctx, agent)
	if err != nil {
		return nil, err
	}
	res := struct {
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions,omitempty"`
	}{append([]string{modernVersion}, strings.Split(supportedVersions, ", ")...), modernCapabilities(caps), instructions(agent)}
	return json.Marshal(res)
}

// modernCapabilities adapts the capabilities of initialize to 2026-07-28:
// they are the same members, with other meanings there. resources.subscribe
// and listChanged are served on subscriptions/listen streams (the
// resourceSubscriptions filter in place of resources/subscribe).
func modernCapabilities(caps json.RawMessage) json.RawMessage { return caps }

// cacheable are the methods whose results carry ttlMs and cacheScope
// (schema: DiscoverResult, ListToolsResult, ListPromptsResult,
// ListResourcesResult, ListResourceTemplatesResult and ReadResourceResult
// extend CacheableResult).
var cacheable = map[string]bool{
	"server/discover": true, "tools/list": true, "prompts/list": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
}

// modernResult adds what every 2026-07-28 result carries: resultType
// "complete" (required by basic/index), serverInfo in _meta (a SHOULD), and
// for cacheable results ttlMs 0 and cacheScope "private". A TTL of 0 means
// "stale at once": the registry may change at any time and this server
// offers no subscriptions/listen to say so; "private" because what an
// agent's endpoint lists depends on the credential's grants. A result that
// is not a JSON object is returned as it is.
func (s *Server) modernResult(method string, result []byte) []byte {
	if b, ok := s.appendModern(method, result); ok {
		return b
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil || obj == nil {
		return result
	}
	obj["resultType"] = json.RawMessage(`"complete"`)
	if cacheable[method] {
		obj["ttlMs"] = json.RawMessage(`0`)
		obj["cacheScope"] = json.RawMessage(`"private"`)
	}
	obj["_meta"] = s.withServerInfo(obj["_meta"])
	b, err := json.Marshal(obj)
	if err != nil {
		return result
	}
	return b
}

// withServerInfo adds io.modelcontextprotocol/serverInfo to a result's
// _meta, keeping its other members; a _meta that is not an object is
// replaced.
func (s *Server) withServerInfo(meta json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil || m == nil {
		m = make(map[string]json.RawMessage, 1)
	}
	info, _ := json.Marshal(serverInfo{Name: s.name, Version: s.version})
	m[metaServerInfo] = info
	b, _ := json.Marshal(m) // a map of valid raw JSON always encodes
	return b
}

// modernMembers are the result members modernResult sets; a result that
// may hold one of them (or an escaped member name) takes the slow path.
var modernMembers = [...]string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `"_meta"`, `\u`}

// appendModern is modernResult's fast path for a result object holding
// none of modernMembers, the common case: the members are appended before
// its closing brace, without decoding it. ok is false when it does not
// apply.
func (s *Server) appendModern(method string, result []byte) ([]byte, bool) {
	body := bytes.TrimSpace(result)
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return nil, false
	}
	for _, m := range modernMembers {
		if bytes.Contains(body, []byte(m)) {
			return nil, false
		}
	}
	inner := bytes.TrimSpace(body[1 : len(body)-1])
	b := make([]byte, 0, len(body)+160)
	b = append(append(b, '{'), inner...)
	if len(inner) > 0 {
		b = append(b, ',')
	}
	b = append(b, `"resultType":"complete",`...)
	if cacheable[method] {
		b = append(b, `"ttlMs":0,"cacheScope":"private",`...)
	}
	b = append(b, `"_meta":{"`+metaServerInfo+`":{"name":`...)
	b = appendJSONString(b, s.name)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, s.version)
	return append(b, "}}}"...), true
}

// stripProtocolMeta returns params without the reserved per-request
// protocol keys of _meta (io.modelcontextprotocol/*), which describe this
// request to the gateway: relayed as they are, they would tell an upstream
// that speaks another revision, over its own session, something false. The
// other _meta keys (progressToken, trace context) and params are kept.
func stripProtocolMeta(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil || meta == nil {
		return params
	}
	for k := range meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			delete(meta, k)
		}
	}
	if len(meta) == 0 {
		delete(p, "_meta")
	} else {
		p["_meta"], _ = json.Marshal(meta) // a map of valid raw JSON always encodes
	}
	b, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return b
}

// codeResourceNotFound is the code the 2026-07-28 revision retired
// (basic/index, "Error Codes"): resource not found is -32602 there.
const codeResourceNotFound = -32002

// modernError adapts an error for a 2026-07-28 caller: an upstream's
// -32002 (resource not found, from an older revision) is sent as -32602,
// which that revision uses instead.
func modernError(e *rpcError) *rpcError {
	if e.Code == codeResourceNotFound {
		return &rpcError{Code: codeInvalidParams, Message: e.Message, Data: e.Data}
	}
	return e
}

// replyStatus is the HTTP status of a JSON reply: 200, except that on
// 2026-07-28 a MissingRequiredClientCapability error (-32021, which a
// relayed upstream may return) is 400, as basic/index requires.
func replyStatus(ls *liveSession, resp []byte) int {
	if modern(ls.version) && bytes.Contains(resp, []byte(`"error":{"code":-32021`)) {
		return http.StatusBadRequest
	}
	return http.StatusOK
}
