package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
)

// MessageBus posts messages so that every replica's waiters hear of them,
// wakes inbox streams, and records which agents have workers connected.
// The bus package implements it.
type MessageBus interface {
	// Post stores m and wakes whoever waits for it, on every replica.
	Post(ctx context.Context, m *mcpgate.Message) error
	// Inbox returns a channel that receives a signal whenever a message
	// for the agent's workers is posted, until ctx ends.
	Inbox(ctx context.Context, agentID string) <-chan struct{}
	// MarkOnline records that a worker of the agent's skill (of all its
	// skills when skill is "") holds a stream, until the returned func is
	// called.
	MarkOnline(ctx context.Context, agentID, skill string) func()
	// WakeInbox wakes the agent's inbox streams on every replica, as a
	// post does: messages were released for them to claim.
	WakeInbox(ctx context.Context, agentID string)
	// Handoff registers an inbox stream for the messages posted on this
	// replica while it waits, delivered to it as they are stored.
	Handoff(inbox mcpgate.Inbox) mcpgate.Handoff
}

// Agents finds agents in memory. The registry implements it; what it
// returns may be as old as the registry's last reload.
type Agents interface {
	// Agent returns the agent with the ID, and whether there is one.
	Agent(id string) (*mcpgate.Agent, bool)
}

// Defaults of the agent inbox.
const (
	// DefaultVisibility is how long a delivered, unacknowledged message
	// waits before it is delivered again once the stream that holds it
	// stops renewing it without releasing it (its replica died).
	DefaultVisibility = 10 * time.Second
	// DefaultInboxPing is how often a quiet inbox stream gets a ": ping"
	// comment, so that proxies and the worker see it alive.
	DefaultInboxPing = 15 * time.Second
	// inboxBatch is how many messages one claim takes.
	inboxBatch = 100
	// inboxWriteTimeout bounds each write to an inbox stream, so that a
	// worker that does not read cannot hold the handler.
	inboxWriteTimeout = 10 * time.Second
	// maxAckIDs is how many messages one acknowledgement may name.
	maxAckIDs = 1000
	// maxListLimit is the most messages one page of a channel holds.
	maxListLimit = 1000
)

// visibility returns the configured visibility timeout or the default.
func (s *Server) visibility() time.Duration {
	if s.opts.Visibility > 0 {
		return s.opts.Visibility
	}
	return DefaultVisibility
}

// inboxPing returns the configured ping interval or the default.
func (s *Server) inboxPing() time.Duration {
	if s.opts.InboxPing > 0 {
		return s.opts.InboxPing
	}
	return DefaultInboxPing
}

// worker is authed for the routes of agent workers: the caller must hold
// an agent key (issued under the agent's current owner), and the message
// service must be configured.
func (s *Server) worker(h callerHandler) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.authenticateWorker(r)
		if err != nil {
			return err
		}
		return h(w, r, c)
	}
}

// authenticateWorker finds the caller of a worker route, whose user it
// leaves nil (the worker routes act for the key's agent, not for a user).
// The key's agent must be owned by the key's user (Credential.Authorize):
// it is looked up in Options.Agents when set, as the MCP endpoint looks up
// its agent, and read from the store when that does not settle it (no
// such agent there, or another owner), so that a refusal is always the
// store's. The key's user is read only when that check fails, to report
// a user that no longer exists as authenticate does: a user who owns
// agents cannot be deleted, so an agent the user owns proves the user
// exists. That saves a worker two reads of the store per request.
func (s *Server) authenticateWorker(r *http.Request) (*caller, error) {
	cred, err := s.opts.Auth.Authenticate(r)
	if err != nil {
		return nil, err
	}
	if cred.Kind != mcpgate.CredentialAgentKey {
		if _, err := s.callerOf(r.Context(), cred); err != nil {
			return nil, err
		}
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "this route takes the agent's API key (bak_…), sent as Authorization: Bearer or X-Agent-API-Key")
	}
	if s.opts.Bus == nil {
		return nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "this gateway runs without the message service")
	}
	c := &caller{cred: cred}
	if s.ownsAgentInMemory(cred) {
		return c, nil
	}
	if _, err := s.readAgent(r.Context(), c, cred.AgentID); err != nil {
		if _, uerr := s.callerOf(r.Context(), cred); uerr != nil {
			return nil, uerr
		}
		return nil, err
	}
	return c, nil
}

// ownsAgentInMemory reports whether Options.Agents holds the agent key's
// agent, owned by the key's user.
func (s *Server) ownsAgentInMemory(cred *mcpgate.Credential) bool {
	if s.opts.Agents == nil {
		return false
	}
	a, ok := s.opts.Agents.Agent(cred.AgentID)
	return ok && a.OwnerID == cred.UserID
}

// handleInboxAck acknowledges messages, so that they are not delivered
// again. Returns ENOTFOUND naming the first ID the agent has no message
// of, after acknowledging the others.
func (s *Server) handleInboxAck(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req struct {
		IDs []string `json:"ids"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if len(req.IDs) == 0 || len(req.IDs) > maxAckIDs {
		return fieldErrorf(mcpgate.EINVALID, "ids", "ids must list 1 to %d message IDs", maxAckIDs)
	}
	var missing error
	for _, id := range req.IDs {
		err := s.opts.Store.AckMessage(r.Context(), c.cred.AgentID, id)
		if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND && missing == nil {
			missing = fieldErrorf(mcpgate.ENOTFOUND, "ids", "agent %q has no message %q", c.cred.AgentID, id)
		} else if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
			return err
		}
	}
	if missing != nil {
		return missing
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// messagePost is the body of POST /api/v1/channels/{id}/messages.
type messagePost struct {
	Type      mcpgate.MessageType `json:"type"`
	InReplyTo string              `json:"in_reply_to"`
	Body      mcpgate.MessageBody `json:"body"`
}

// handleMessagePost stores an agent worker's reply, delta or error on a
// channel of its agent. A final reply acknowledges the chat_message it
// answers. Returns ENOTFOUND for a channel of another agent, EINVALID for a
// type agents do not post or an in_reply_to that is not a chat_message of
// the channel, and ECONFLICT for a second final reply. The channel is not
// read first: the post names the key's agent, and the store refuses a
// channel of any other as one that does not exist.
func (s *Server) handleMessagePost(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req messagePost
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Type != mcpgate.MessageReplyDelta && !req.Type.Final() {
		return fieldErrorf(mcpgate.EINVALID, "type", "type must be agent_reply_delta, agent_reply or agent_error, not %q", req.Type)
	}
	if req.InReplyTo == "" {
		return fieldErrorf(mcpgate.EINVALID, "in_reply_to", "in_reply_to must name the chat_message this answers")
	}
	m := &mcpgate.Message{
		ChannelID: r.PathValue("id"), AgentID: c.cred.AgentID, Type: req.Type,
		InReplyTo: req.InReplyTo, Sender: c.cred.Identity(), Body: req.Body,
	}
	if err := s.opts.Bus.Post(r.Context(), m); err != nil {
		if mcpgate.ErrorCode(err) == mcpgate.EINVALID {
			return withField(err, "in_reply_to")
		}
		return err
	}
	writeJSON(w, http.StatusCreated, m)
	return nil
}

// handleMessageList returns a page of a channel's history, to an agent key
// of the channel's agent or to the caller who opened the channel. Returns
// ENOTFOUND for anyone else.
func (s *Server) handleMessageList(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	ch, err := s.opts.Store.FindChannel(r.Context(), id)
	if err != nil {
		return err
	}
	if err := s.mayRead(r.Context(), c, ch); err != nil {
		return err
	}
	after, err := queryInt(r, "after", 0, 0)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 100, maxListLimit)
	if err != nil {
		return err
	}
	msgs, err := s.opts.Store.ListMessages(r.Context(), ch.ID, after, int(limit))
	if err != nil {
		return err
	}
	if msgs == nil {
		msgs = []*mcpgate.Message{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": msgs})
	return nil
}

// mayRead returns ENOTFOUND unless the caller may read the channel: an
// agent key of its agent (issued under the agent's current owner), or the
// identity that opened it.
func (s *Server) mayRead(ctx context.Context, c *caller, ch *mcpgate.Channel) error {
	if c.cred.Kind == mcpgate.CredentialAgentKey && c.cred.AgentID == ch.AgentID {
		_, err := s.readAgent(ctx, c, ch.AgentID)
		return err
	}
	if c.cred.Identity() != ch.Owner {
		return notFound("channel", ch.ID)
	}
	return nil
}

// queryInt reads a non-negative integer query parameter: def when absent,
// EINVALID when malformed or above max (when max > 0).
func queryInt(r *http.Request, name string, def, max int64) (int64, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 || (max > 0 && n > max) {
		bound := "a non-negative integer"
		if max > 0 {
			bound = fmt.Sprintf("an integer from 0 to %d", max)
		}
		return 0, fieldErrorf(mcpgate.EINVALID, name, "%s must be %s, not %q", name, bound, raw)
	}
	return n, nil
}

// encodeEvent returns a message as one SSE event, with its seq as the
// event ID.
func encodeEvent(m *mcpgate.Message) ([]byte, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode message %s: %w", m.ID, err)
	}
	ev := make([]byte, 0, len(data)+48)
	ev = fmt.Appendf(ev, "id: %d\nevent: message\ndata: ", m.Seq)
	ev = append(ev, data...)
	return append(ev, '\n', '\n'), nil
}
