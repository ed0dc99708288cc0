package config

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
)

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
