package config

import (
	"context"
	"fmt"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// hashPasswords returns the hash to store for each user of the file who has
// a password: the stored hash while it still matches, else a new one. It
// runs before Apply's transaction, since checking and hashing a password
// take long and the transaction holds the store's only writer.
func (c *Config) hashPasswords(ctx context.Context, store mcpgate.UserStore) (map[string]string, error) {
	stored, err := store.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	old := make(map[string]string, len(stored))
	for _, u := range stored {
		old[u.Name] = u.PasswordHash
	}
	hashes := map[string]string{}
	for _, u := range c.Users {
		if u.password == nil {
			continue
		}
		if h := old[u.Name]; auth.CheckPassword(h, *u.password) {
			hashes[u.Name] = h
			continue
		}
		h, err := auth.HashPassword(*u.password)
		if err != nil {
			return nil, fmt.Errorf("hash the password of user %s: %w", u.Name, err)
		}
		hashes[u.Name] = h
	}
	return hashes, nil
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

// passwordHash returns the hash user u gets: that of the file's password
// when it sets one; else none for a user the file owns (old is nil or has
// Source config), and the stored one for a user made another way.
func (a *applier) passwordHash(u *User, old *mcpgate.User) string {
	if h, ok := a.hashes[u.Name]; ok {
		return h
	}
	if old == nil || old.Source == mcpgate.SourceConfig {
		return ""
	}
	return old.PasswordHash
}

// createUser stores a new user of the file.
func (a *applier) createUser(ctx context.Context, u *User) error {
	nu := &mcpgate.User{Name: u.Name, Admin: u.Admin, PasswordHash: a.passwordHash(u, nil), Source: mcpgate.SourceConfig}
	if err := a.tx.CreateUser(ctx, nu); err != nil {
		return fmt.Errorf("create user %s: %w", u.Name, err)
	}
	a.userIDs[u.Name] = nu.ID
	a.changes.Users.Created++
	return nil
}

// updateUser saves a user of the file when it differs from the stored one.
// The user keeps its Source, so one made another way stays out of reach
// of pruning.
func (a *applier) updateUser(ctx context.Context, u *User, old *mcpgate.User) error {
	a.userIDs[u.Name] = old.ID
	hash := a.passwordHash(u, old)
	if u.Admin == old.Admin && hash == old.PasswordHash {
		return nil
	}
	nu := *old
	nu.Admin, nu.PasswordHash = u.Admin, hash
	if err := a.tx.UpdateUser(ctx, &nu); err != nil {
		return fmt.Errorf("update user %s: %w", u.Name, err)
	}
	a.changes.Users.Updated++
	return nil
}
