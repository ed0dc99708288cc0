package config

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// Apply makes store hold what the file declares, in one transaction: it
// creates or updates the file's users, agents and skills, then deletes the
// skills, agents and users with Source config that the file no longer
// names. An entry the file names but that was made another way (by the
// CLI, the demo or the API) is updated to the file's fields yet keeps its
// Source, so the file never deletes it: dropped from the file, it stays as
// the file left it. The file is the truth for the users it owns: removing
// a Source config user's password from the file removes the password,
// while other users keep theirs.
//
// Passwords are checked and hashed before the transaction, which holds the
// store's writer. Applying the same file twice changes nothing. On error
// nothing changes; an owner missing from both the file and the store is an
// *Error naming the field.
//
// Replicas starting together apply the same file to one database at once:
// each may find a user or agent missing, and all but one lose the race to
// create it (ECONFLICT). The transaction is then run again, up to
// applyAttempts times in all, and finds what the winner created.
func (c *Config) Apply(ctx context.Context, store mcpgate.Store) (*Changes, error) {
	hashes, err := c.hashPasswords(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("apply %s: %w", c.File, err)
	}
	changes, err := c.applyTx(ctx, store, hashes)
	for n := 1; n < applyAttempts && mcpgate.ErrorCode(err) == mcpgate.ECONFLICT; n++ {
		changes, err = c.applyTx(ctx, store, hashes)
	}
	return changes, err
}

// applyAttempts bounds the runs of Apply's transaction: a conflict that
// another attempt does not clear is the file's own (a name two entries
// claim), not a race.
const applyAttempts = 3

// applyTx runs Apply's transaction once.
func (c *Config) applyTx(ctx context.Context, store mcpgate.Store, hashes map[string]string) (*Changes, error) {
	var changes *Changes
	err := store.Tx(ctx, func(tx mcpgate.Store) error {
		a := &applier{cfg: c, tx: tx, hashes: hashes, changes: &Changes{}, userIDs: map[string]string{}}
		if err := a.run(ctx); err != nil {
			return err
		}
		changes = a.changes
		return nil
	})
	var ce *Error
	if errors.As(err, &ce) {
		return nil, ce // already names the file
	} else if err != nil {
		return nil, fmt.Errorf("apply %s: %w", c.File, err)
	}
	return changes, nil
}

// applier applies one config within one transaction.
type applier struct {
	cfg     *Config
	tx      mcpgate.Store
	changes *Changes
	// hashes holds the password hashes of the file's users who have a
	// password, worked out before the transaction.
	hashes map[string]string
	// userIDs maps the names of the file's users to their IDs.
	userIDs map[string]string
}

// run applies every section, then removes what the file dropped.
func (a *applier) run(ctx context.Context) error {
	for _, step := range []func(context.Context) error{a.users, a.agents, a.skills, a.pruneSkills, a.pruneAgents, a.pruneUsers} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// agents creates or updates the file's agents.
func (a *applier) agents(ctx context.Context) error {
	for _, ag := range a.cfg.Agents {
		ownerID, err := a.ownerID(ctx, ag)
		if err != nil {
			return err
		}
		next := &mcpgate.Agent{
			ID: ag.ID, Name: ag.Name, Description: ag.Description, OwnerID: ownerID,
			MCPEnabled: ag.MCPEnabled, Source: mcpgate.SourceConfig,
		}
		if err := a.putAgent(ctx, next); err != nil {
			return err
		}
	}
	return nil
}

// putAgent creates the agent, or updates it when it differs. An agent made
// another way keeps its Source.
func (a *applier) putAgent(ctx context.Context, next *mcpgate.Agent) error {
	old, err := a.tx.FindAgent(ctx, next.ID)
	switch {
	case mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND:
		if err := a.tx.CreateAgent(ctx, next); err != nil {
			return fmt.Errorf("create agent %s: %w", next.ID, err)
		}
		a.changes.Agents.Created++
		return nil
	case err != nil:
		return err
	case old.Name == next.Name && old.Description == next.Description && old.OwnerID == next.OwnerID &&
		old.MCPEnabled == next.MCPEnabled:
		return nil
	}
	next.Source = old.Source
	if err := a.tx.UpdateAgent(ctx, next); err != nil {
		return fmt.Errorf("update agent %s: %w", next.ID, err)
	}
	a.changes.Agents.Updated++
	return nil
}

// ownerID finds the ID of an agent's owner: a user of the file, or one in
// the store that the file did not create.
func (a *applier) ownerID(ctx context.Context, ag *Agent) (string, error) {
	if id, ok := a.userIDs[ag.Owner]; ok {
		return id, nil
	}
	u, err := a.tx.FindUserByName(ctx, ag.Owner)
	missing := *ag.ownerAt
	switch {
	case mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND:
		missing.Msg = fmt.Sprintf("user %q is neither declared under users nor in the gateway; declare it or create it with: mcpgate user create %s", ag.Owner, ag.Owner)
		return "", &missing
	case err != nil:
		return "", err
	case u.Source == mcpgate.SourceConfig:
		missing.Msg = fmt.Sprintf("user %q is no longer declared under users, so this apply would delete it; declare it again or choose another owner", ag.Owner)
		return "", &missing
	}
	return u.ID, nil
}

// skills puts the file's skills; an equal skill changes nothing.
func (a *applier) skills(ctx context.Context) error {
	for _, ag := range a.cfg.Agents {
		for _, s := range ag.Skills {
			if err := a.putSkill(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// putSkill puts one skill and counts it when the store changed. The store
// knows best what "equal" means, so a change is read from its generation.
// A skill made another way keeps its Source.
func (a *applier) putSkill(ctx context.Context, s *mcpgate.Skill) error {
	old, err := a.tx.FindSkill(ctx, s.AgentID, s.Name)
	existed := err == nil
	if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		return err
	}
	if existed {
		s = old.Replacing(s)
	}
	before, err := a.tx.Generation(ctx)
	if err != nil {
		return err
	}
	if err := a.tx.PutSkill(ctx, s); err != nil {
		return fmt.Errorf("put skill %s of agent %s: %w", s.Name, s.AgentID, err)
	}
	after, err := a.tx.Generation(ctx)
	switch {
	case err != nil:
		return err
	case !existed:
		a.changes.Skills.Created++
	case after != before:
		a.changes.Skills.Updated++
	}
	return nil
}
