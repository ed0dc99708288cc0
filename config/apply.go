package config

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// Apply makes store hold what the file declares, in one transaction:
// it creates or updates the file's users, agents and skills, taking over
// entries of the same name made another way, then deletes the skills,
// agents and users that an earlier apply created (Source config) and the
// file no longer names. Entries from other sources are never deleted.
// Applying the same file twice changes nothing. On error nothing changes;
// an owner missing from both the file and the store is an *Error naming
// the field.
func (c *Config) Apply(ctx context.Context, store mcpgate.Store) (*Changes, error) {
	var changes *Changes
	err := store.Tx(ctx, func(tx mcpgate.Store) error {
		a := &applier{cfg: c, tx: tx, changes: &Changes{}, userIDs: map[string]string{}}
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

// users creates or updates the file's users.
func (a *applier) users(ctx context.Context) error {
	for _, u := range a.cfg.Users {
		old, err := a.tx.FindUserByName(ctx, u.Name)
		if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
			err = a.createUser(ctx, u)
		} else if err == nil {
			err = a.updateUser(ctx, u, old)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// createUser stores a new user of the file.
func (a *applier) createUser(ctx context.Context, u *User) error {
	nu := &mcpgate.User{Name: u.Name, Admin: u.Admin, Source: mcpgate.SourceConfig}
	if u.password != nil {
		hash, err := auth.HashPassword(*u.password)
		if err != nil {
			return err
		}
		nu.PasswordHash = hash
	}
	if err := a.tx.CreateUser(ctx, nu); err != nil {
		return fmt.Errorf("create user %s: %w", u.Name, err)
	}
	a.userIDs[u.Name] = nu.ID
	a.changes.Users.Created++
	return nil
}

// updateUser saves a user of the file when it differs from the stored one.
// The stored hash is kept while the password still matches it, and when the
// file sets no password.
func (a *applier) updateUser(ctx context.Context, u *User, old *mcpgate.User) error {
	a.userIDs[u.Name] = old.ID
	nu := *old
	nu.Admin, nu.Source = u.Admin, mcpgate.SourceConfig
	if u.password != nil && !auth.CheckPassword(old.PasswordHash, *u.password) {
		hash, err := auth.HashPassword(*u.password)
		if err != nil {
			return err
		}
		nu.PasswordHash = hash
	}
	if nu.Admin == old.Admin && nu.Source == old.Source && nu.PasswordHash == old.PasswordHash {
		return nil
	}
	if err := a.tx.UpdateUser(ctx, &nu); err != nil {
		return fmt.Errorf("update user %s: %w", u.Name, err)
	}
	a.changes.Users.Updated++
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

// putAgent creates the agent, or updates it when it differs.
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
		old.MCPEnabled == next.MCPEnabled && old.Source == next.Source:
		return nil
	}
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
func (a *applier) putSkill(ctx context.Context, s *mcpgate.Skill) error {
	_, err := a.tx.FindSkill(ctx, s.AgentID, s.Name)
	existed := err == nil
	if err != nil && mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		return err
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

// pruneSkills deletes the config skills the file no longer names.
func (a *applier) pruneSkills(ctx context.Context) error {
	named := map[[2]string]bool{}
	for _, ag := range a.cfg.Agents {
		for _, s := range ag.Skills {
			named[[2]string{ag.ID, s.Name}] = true
		}
	}
	all, err := a.tx.ListSkills(ctx, "")
	if err != nil {
		return err
	}
	for _, s := range all {
		if s.Source != mcpgate.SourceConfig || named[[2]string{s.AgentID, s.Name}] {
			continue
		}
		if err := a.tx.DeleteSkill(ctx, s.AgentID, s.Name); err != nil {
			return fmt.Errorf("delete skill %s of agent %s: %w", s.Name, s.AgentID, err)
		}
		a.changes.Skills.Deleted++
	}
	return nil
}

// pruneAgents deletes the config agents the file no longer names.
func (a *applier) pruneAgents(ctx context.Context) error {
	named := map[string]bool{}
	for _, ag := range a.cfg.Agents {
		named[ag.ID] = true
	}
	all, err := a.tx.ListAgents(ctx, mcpgate.AgentFilter{})
	if err != nil {
		return err
	}
	for _, ag := range all {
		if ag.Source != mcpgate.SourceConfig || named[ag.ID] {
			continue
		}
		if err := a.tx.DeleteAgent(ctx, ag.ID); err != nil {
			return fmt.Errorf("delete agent %s: %w", ag.ID, err)
		}
		a.changes.Agents.Deleted++
	}
	return nil
}

// pruneUsers deletes the config users the file no longer names. One who
// still owns an agent made another way stops the apply.
func (a *applier) pruneUsers(ctx context.Context) error {
	all, err := a.tx.ListUsers(ctx)
	if err != nil {
		return err
	}
	for _, u := range all {
		if _, named := a.userIDs[u.Name]; named || u.Source != mcpgate.SourceConfig {
			continue
		}
		if err := a.deleteUser(ctx, u); err != nil {
			return err
		}
		a.changes.Users.Deleted++
	}
	return nil
}

// deleteUser deletes a user the file dropped, explaining a refusal.
func (a *applier) deleteUser(ctx context.Context, u *mcpgate.User) error {
	err := a.tx.DeleteUser(ctx, u.ID)
	if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		return err
	}
	owned, lerr := a.tx.ListAgents(ctx, mcpgate.AgentFilter{OwnerID: u.ID})
	if lerr != nil {
		return lerr
	}
	ids := make([]string, len(owned))
	for i, ag := range owned {
		ids[i] = fmt.Sprintf("%s (source %s)", ag.ID, ag.Source)
	}
	return &Error{File: a.cfg.File, Field: "users", Msg: fmt.Sprintf(
		"user %q is no longer in the file but still owns agent %s; keep the user in the file, or delete or move those agents first",
		u.Name, strings.Join(ids, ", "))}
}
