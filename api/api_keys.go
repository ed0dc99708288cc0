package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// keyCreate is the body of POST /api/v1/keys.
type keyCreate struct {
	Kind    mcpgate.KeyKind `json:"kind"`
	AgentID string          `json:"agent_id"`
	Name    string          `json:"name"`
	// User names the user of a user key; only admins may name another.
	User string `json:"user"`
	// ExpiresAt is when the key stops working; absent for never.
	ExpiresAt *time.Time `json:"expires_at"`
}

// createdKey is a new key with its secret, which is shown this once.
type createdKey struct {
	*mcpgate.APIKey
	Key string `json:"key"`
}

// handleKeyList lists the caller's keys: its user keys and the agent keys
// of its agents; an admin's are every key. ?user=NAME and ?agent=ID narrow
// the list.
func (s *Server) handleKeyList(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := c.canWrite(); err != nil {
		return err
	}
	ctx := r.Context()
	f, err := s.keyFilter(ctx, c, r.URL.Query().Get("user"), r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	var keys []*mcpgate.APIKey
	if f == (mcpgate.KeyFilter{}) && !c.isAdmin() {
		keys, err = s.ownKeys(ctx, c)
	} else {
		keys, err = s.opts.Store.ListKeys(ctx, f)
	}
	if err != nil {
		return err
	}
	if keys == nil {
		keys = []*mcpgate.APIKey{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
	return nil
}

// keyFilter checks the list's filters against what the caller may see.
func (s *Server) keyFilter(ctx context.Context, c *caller, user, agentID string) (mcpgate.KeyFilter, error) {
	var f mcpgate.KeyFilter
	if agentID != "" {
		a, err := s.readAgent(ctx, c, agentID)
		if err != nil {
			return f, err
		}
		f.AgentID = a.ID
	}
	switch {
	case user == "":
	case user == c.user.Name:
		f.UserID = c.user.ID
	case !c.isAdmin():
		return f, mcpgate.Errorf(mcpgate.EFORBIDDEN, "only admin users may list other users' keys")
	default:
		u, err := s.userByName(ctx, "user", user)
		if err != nil {
			return f, err
		}
		f.UserID = u.ID
	}
	return f, nil
}

// ownKeys returns a user's user keys and the agent keys of the agents it
// owns, newest first.
func (s *Server) ownKeys(ctx context.Context, c *caller) ([]*mcpgate.APIKey, error) {
	agents, err := s.opts.Store.ListAgents(ctx, mcpgate.AgentFilter{OwnerID: c.user.ID})
	if err != nil {
		return nil, err
	}
	return mcpgate.OwnKeys(ctx, s.opts.Store, c.user.ID, agents)
}

// handleKeyCreate makes a user key for the caller (or, for admins, the
// named user) or an agent key for one of the caller's agents, and shows
// its secret once, as "key".
func (s *Server) handleKeyCreate(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := c.canWrite(); err != nil {
		return err
	}
	var in keyCreate
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := checkExpiry(in.ExpiresAt); err != nil {
		return err
	}
	k, secret, err := s.newKey(r.Context(), c, &in)
	if err != nil {
		return err
	}
	k.Source, k.ExpiresAt = mcpgate.SourceAPI, in.ExpiresAt
	if err := s.opts.Store.CreateKey(r.Context(), k); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, createdKey{APIKey: k, Key: secret})
	return nil
}

// newKey makes the key a request asks for.
func (s *Server) newKey(ctx context.Context, c *caller, in *keyCreate) (*mcpgate.APIKey, string, error) {
	switch in.Kind {
	case mcpgate.KeyUser:
		if in.AgentID != "" {
			return nil, "", fieldErrorf(mcpgate.EINVALID, "agent_id", "a user key is for no one agent; leave agent_id out or ask for kind agent")
		}
		u, err := s.ownerFor(ctx, c, in.User)
		if err != nil {
			return nil, "", withField(err, "user")
		}
		k, secret := auth.NewKey(mcpgate.KeyUser, u.ID, "", in.Name)
		return k, secret, nil
	case mcpgate.KeyAgent:
		if in.User != "" {
			return nil, "", fieldErrorf(mcpgate.EINVALID, "user", "an agent key belongs to its agent's owner; leave user out")
		}
		if in.AgentID == "" {
			return nil, "", fieldErrorf(mcpgate.EINVALID, "agent_id", "is required for an agent key")
		}
		a, err := s.readAgent(ctx, c, in.AgentID)
		if err != nil {
			return nil, "", err
		}
		k, secret := auth.NewKey(mcpgate.KeyAgent, a.OwnerID, a.ID, in.Name)
		return k, secret, nil
	}
	return nil, "", fieldErrorf(mcpgate.EINVALID, "kind", "%q: use \"user\" (oag_…, every agent of the user) or \"agent\" (bak_…, one agent)", in.Kind)
}

// handleKeyRevoke revokes a key the caller may see; it stops working at
// once.
func (s *Server) handleKeyRevoke(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := c.canWrite(); err != nil {
		return err
	}
	ctx := r.Context()
	k, err := s.opts.Store.FindKey(ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	if !s.mayManageKey(ctx, c, k) {
		return notFound("key", k.ID)
	}
	if err := s.opts.Store.RevokeKey(ctx, k.ID, time.Now()); err != nil {
		return err
	}
	s.forget([]*mcpgate.APIKey{k})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mayManageKey reports whether a key is the caller's: its own user key,
// an agent key of one of its agents, or any key for an admin.
func (s *Server) mayManageKey(ctx context.Context, c *caller, k *mcpgate.APIKey) bool {
	switch {
	case c.isAdmin():
		return true
	case k.Kind == mcpgate.KeyUser:
		return k.UserID == c.user.ID
	}
	_, err := s.readAgent(ctx, c, k.AgentID)
	return err == nil
}

// keyPatch is the body of PATCH /api/v1/keys/{id}: absent fields keep
// their value; "expires_at": null removes the expiry.
type keyPatch struct {
	Name *string `json:"name"`
	// ExpiresAt is raw so that null (never) differs from absent (keep).
	ExpiresAt json.RawMessage `json:"expires_at"`
}

// checkExpiry refuses an expiry that has passed: revoking stops a key now.
func checkExpiry(at *time.Time) error {
	if at != nil && !at.After(time.Now()) {
		return fieldErrorf(mcpgate.EINVALID, "expires_at", "%s has passed; give a future time, or revoke the key (DELETE) to stop it now", at.Format(time.RFC3339))
	}
	return nil
}

// handleKeyGet shows a key the caller may see, never its secret.
func (s *Server) handleKeyGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	k, err := s.manageableKey(r, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// handleKeyPatch changes a key's name or expiry; the change reaches this
// process's key cache at once.
func (s *Server) handleKeyPatch(w http.ResponseWriter, r *http.Request, c *caller) error {
	k, err := s.manageableKey(r, c)
	if err != nil {
		return err
	}
	var in keyPatch
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := applyKeyPatch(k, &in); err != nil {
		return err
	}
	if err := s.opts.Store.UpdateKey(r.Context(), k); err != nil {
		return err
	}
	s.forget([]*mcpgate.APIKey{k})
	writeJSON(w, http.StatusOK, k)
	return nil
}

// manageableKey returns the key the path names if the caller may manage
// it; another's key is ENOTFOUND, as if it did not exist.
func (s *Server) manageableKey(r *http.Request, c *caller) (*mcpgate.APIKey, error) {
	if err := c.canWrite(); err != nil {
		return nil, err
	}
	k, err := s.opts.Store.FindKey(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if !s.mayManageKey(r.Context(), c, k) {
		return nil, notFound("key", k.ID)
	}
	return k, nil
}

// applyKeyPatch applies a patch to k.
func applyKeyPatch(k *mcpgate.APIKey, in *keyPatch) error {
	setIf(&k.Name, in.Name)
	switch {
	case in.ExpiresAt == nil:
	case string(in.ExpiresAt) == "null":
		k.ExpiresAt = nil
	default:
		var at time.Time
		if err := json.Unmarshal(in.ExpiresAt, &at); err != nil {
			return fieldErrorf(mcpgate.EINVALID, "expires_at", "give an RFC 3339 time such as 2030-01-02T15:04:05Z, or null for never")
		}
		if err := checkExpiry(&at); err != nil {
			return err
		}
		k.ExpiresAt = &at
	}
	return nil
}
