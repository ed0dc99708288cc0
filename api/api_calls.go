package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
)

// handleCallList lists audit log calls, newest first, one page at a time:
// an admin's are every call, a user's the calls of the agents it owns, an
// agent key's its agent's. ?agent, ?tool, ?user (a name or an ID),
// ?outcome, ?since and ?until (RFC 3339), ?cursor and ?limit narrow it.
func (s *Server) handleCallList(w http.ResponseWriter, r *http.Request, c *caller) error {
	f, err := s.callFilter(r.Context(), c, r.URL.Query())
	if err != nil {
		return err
	}
	calls, next, err := s.opts.Store.ListCalls(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"calls": calls, "next_cursor": next})
	return nil
}

// callFilter reads the list's query and limits it to what c may see.
func (s *Server) callFilter(ctx context.Context, c *caller, q map[string][]string) (mcpgate.CallFilter, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	f := mcpgate.CallFilter{AgentID: get("agent"), Tool: get("tool"), Outcome: get("outcome"), Cursor: get("cursor")}
	var err error
	if f.Since, err = queryTime("since", get("since")); err != nil {
		return f, err
	}
	if f.Until, err = queryTime("until", get("until")); err != nil {
		return f, err
	}
	if f.Limit, err = queryLimit(get("limit")); err != nil {
		return f, err
	}
	if f.UserID, err = s.callUser(ctx, get("user")); err != nil {
		return f, err
	}
	return f, s.scopeCalls(ctx, c, &f)
}

// scopeCalls limits f to the calls c may see.
func (s *Server) scopeCalls(ctx context.Context, c *caller, f *mcpgate.CallFilter) error {
	switch {
	case c.isAdmin():
		return nil
	case c.cred.Kind == mcpgate.CredentialAgentKey && f.AgentID == "":
		f.AgentID = c.cred.AgentID
	case f.AgentID == "":
		f.OwnerID = c.user.ID
		return nil
	}
	_, err := s.readAgent(ctx, c, f.AgentID)
	return err
}

// callUser resolves the ?user filter, a user name or ID, to an ID. An
// unknown user matches nothing.
func (s *Server) callUser(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	u, err := s.opts.Store.FindUserByName(ctx, name)
	switch mcpgate.ErrorCode(err) {
	case "":
		return u.ID, nil
	case mcpgate.ENOTFOUND:
		return name, nil
	}
	return "", err
}

// queryTime parses an RFC 3339 query parameter; zero when empty.
func queryTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, fieldErrorf(mcpgate.EINVALID, field, "%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z", field)
	}
	return t, nil
}

// queryLimit parses ?limit: 1 to 1000; 0 when empty.
func queryLimit(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1000 {
		return 0, fieldErrorf(mcpgate.EINVALID, "limit", "limit must be a whole number from 1 to 1000")
	}
	return n, nil
}

// handleCallGet returns one call the caller may see; another's is 404.
func (s *Server) handleCallGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PathValue("id")
	call, err := s.opts.Store.FindCall(r.Context(), id)
	if err != nil {
		return err
	}
	if !c.isAdmin() {
		if _, err := s.readAgent(r.Context(), c, call.AgentID); err != nil {
			return notFound("call", id)
		}
	}
	writeJSON(w, http.StatusOK, call)
	return nil
}
