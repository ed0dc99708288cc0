package mcp

import (
	"encoding/json"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// capabilities are the server capabilities every agent's endpoint declares;
// a Relayer adds to them.
const capabilities = `{"tools":{"listChanged":true},"logging":{}}`

// initializeParams is what initialize reads from the client.
// ProtocolVersion is a pointer so that a missing (or null) version can be
// told from an empty one.
type initializeParams struct {
	ProtocolVersion *string         `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

// initializeResult is the InitializeResult the server answers with.
type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      serverInfo      `json:"serverInfo"`
	Instructions    string          `json:"instructions,omitempty"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// initialize opens a new session and answers with the negotiated version
// and capabilities. An initialize sent within an existing session (with an
// Mcp-Session-Id header) also opens a new session: the old one is left as
// is, and the client continues with the id in the response.
func (s *Server) initialize(w http.ResponseWriter, r *http.Request, agent *mcpgate.Agent, cred *mcpgate.Credential, acc accepts, m *message) {
	p, err := decodeInitialize(m.Params)
	if err != nil {
		writeJSON(w, http.StatusOK, appendError(nil, m.ID, toRPCError(err)))
		return
	}
	caps, err := s.serverCapabilities(r.Context(), agent)
	if err != nil {
		s.log.Error("mcp: agent capabilities", "agent", agent.ID, "err", err)
		writeJSON(w, http.StatusOK, appendError(nil, m.ID, toRPCError(err)))
		return
	}
	now := s.now()
	rec := &mcpgate.Session{
		ID: randomHex(sessionIDLen / 2), AgentID: agent.ID, Identity: cred.Identity(),
		ProtocolVersion: negotiate(*p.ProtocolVersion),
		ClientName:      p.ClientInfo.Name, ClientVersion: p.ClientInfo.Version, ClientCapabilities: p.Capabilities,
		CreatedAt: now, LastSeenAt: now,
	}
	if err := s.store.CreateSession(r.Context(), rec); err != nil {
		s.log.Error("mcp: create session", "agent", agent.ID, "err", err)
		writeJSON(w, http.StatusOK, appendError(nil, m.ID, toRPCError(err)))
		return
	}
	ls := s.cache(s.newLive(rec))
	defer ls.release()
	w.Header().Set("Mcp-Session-Id", rec.ID)
	s.reply(w, r, ls, acc, appendResult(nil, m.ID, s.initializeResult(agent, rec.ProtocolVersion, caps)))
}

// decodeInitialize reads initialize's params, which must be an object with
// a protocolVersion string: a client that sends none has not said which
// revision it speaks, so no session is opened for it.
func decodeInitialize(params json.RawMessage) (*initializeParams, error) {
	var p initializeParams
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "Invalid params: initialize needs params with protocolVersion, a string naming the protocol revision the client speaks (such as %q)", latestVersion)
	}
	return &p, nil
}

// initializeResult encodes the InitializeResult for agent.
func (s *Server) initializeResult(agent *mcpgate.Agent, version string, caps json.RawMessage) []byte {
	res := initializeResult{
		ProtocolVersion: version,
		Capabilities:    s.withTasks(caps, version),
		ServerInfo:      serverInfo{Name: s.name, Version: s.version, Title: agent.Name},
		Instructions:    instructions(agent),
	}
	b, err := json.Marshal(res)
	if err != nil {
		panic(err) // strings and constant JSON always encode
	}
	return b
}

// instructions describes the agent to the client's model: its name and
// description, when set.
func instructions(agent *mcpgate.Agent) string {
	switch {
	case agent.Name != "" && agent.Description != "":
		return agent.Name + ": " + agent.Description
	case agent.Name != "":
		return agent.Name
	}
	return agent.Description
}
