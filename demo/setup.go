package demo

import (
	"context"
	"fmt"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// Details say what Setup made or found, for the start-up banner.
type Details struct {
	AgentID  string
	UserName string
	UserID   string
	// KeyID and KeyHint identify the demo user key.
	KeyID   string
	KeyHint string
	// Key is the demo key's secret, set only in the run that created the
	// key: it is shown once and never stored.
	Key string
	// Password is the demo user's password, set only in the run that gave
	// the user one: it is shown once and kept only as a hash.
	Password string
}

// agentDescription describes the demo agent.
const agentDescription = "The mcpgate demo: converts units and currencies, looks up built-in weather " +
	"and saves invoice rows as CSV files, through REST tools served by the gateway itself; " +
	"ask it about a sample table of 1,200 orders (\"average amount by region\", \"top 3 by amount\") " +
	"and an agent worker answers over the message service."

// Setup makes the demo usable in store, in one transaction: it creates the
// user "demo", the agent "demo" and a user key named "demo" when they do not
// exist (a new key also when every demo key was revoked), and puts the
// demo skill pointing at baseURL on every run, so a changed address updates
// it while an unchanged one changes nothing.
func Setup(ctx context.Context, store mcpgate.Store, baseURL string) (*Details, error) {
	var d *Details
	err := store.Tx(ctx, func(tx mcpgate.Store) error {
		var err error
		d, err = setup(ctx, tx, baseURL)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set up the demo: %w", err)
	}
	return d, nil
}

// setup runs Setup's steps within a transaction.
func setup(ctx context.Context, tx mcpgate.Store, baseURL string) (*Details, error) {
	user, password, err := ensureUser(ctx, tx)
	if err != nil {
		return nil, err
	}
	if err := ensureAgent(ctx, tx, user.ID); err != nil {
		return nil, err
	}
	d := &Details{AgentID: AgentID, UserName: user.Name, UserID: user.ID, Password: password}
	if err := ensureKey(ctx, tx, d); err != nil {
		return nil, err
	}
	if err := tx.PutSkill(ctx, Skill(baseURL)); err != nil {
		return nil, fmt.Errorf("put the demo skill: %w", err)
	}
	return d, nil
}

// ensureUser finds or creates the demo user and makes it an administrator
// with a password, so that the README's steps work from the demo: signing
// in for OAuth, and skills that reference the gateway's environment. A
// password is generated only for a user without one, and returned then.
func ensureUser(ctx context.Context, tx mcpgate.Store) (*mcpgate.User, string, error) {
	u, err := tx.FindUserByName(ctx, UserName)
	switch {
	case mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND:
		u = &mcpgate.User{Name: UserName, Source: mcpgate.SourceDemo}
	case err != nil:
		return nil, "", err
	case u.Admin && u.PasswordHash != "":
		return u, "", nil
	}
	password, err := makeAdmin(u)
	if err != nil {
		return nil, "", err
	}
	if u.ID == "" {
		err = tx.CreateUser(ctx, u)
	} else {
		err = tx.UpdateUser(ctx, u) // a demo user of an older version
	}
	if err != nil {
		return nil, "", fmt.Errorf("set up the demo user: %w", err)
	}
	return u, password, nil
}

// makeAdmin makes u an administrator and gives it a new password when it
// has none, returning that password.
func makeAdmin(u *mcpgate.User) (string, error) {
	u.Admin = true
	if u.PasswordHash != "" {
		return "", nil
	}
	password := auth.NewPassword()
	hash, err := auth.HashPassword(password)
	if err != nil {
		return "", err
	}
	u.PasswordHash = hash
	return password, nil
}

// ensureAgent creates the demo agent unless it exists. An agent "demo" made
// another way, or owned by someone else, is refused rather than taken over:
// the demo would put a skill with allow_private on it.
func ensureAgent(ctx context.Context, tx mcpgate.Store, ownerID string) error {
	existing, err := tx.FindAgent(ctx, AgentID)
	if err == nil && (existing.Source != mcpgate.SourceDemo || existing.OwnerID != ownerID) {
		return mcpgate.Errorf(mcpgate.ECONFLICT, "an agent %q that the demo did not create already exists (source %s); run the demo with another --data-dir, or delete that agent", AgentID, existing.Source)
	}
	if mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		return err
	}
	a := &mcpgate.Agent{
		ID: AgentID, Name: "mcpgate demo", Description: agentDescription,
		OwnerID: ownerID, MCPEnabled: true, Source: mcpgate.SourceDemo,
	}
	if err := tx.CreateAgent(ctx, a); err != nil {
		return fmt.Errorf("create the demo agent: %w", err)
	}
	return nil
}

// ensureKey finds the demo user's live demo key, or creates one and puts
// its secret in d.
func ensureKey(ctx context.Context, tx mcpgate.Store, d *Details) error {
	keys, err := tx.ListKeys(ctx, mcpgate.KeyFilter{UserID: d.UserID, Kind: mcpgate.KeyUser})
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Name == KeyName && k.Source == mcpgate.SourceDemo && k.RevokedAt == nil {
			d.KeyID, d.KeyHint = k.ID, k.Hint
			return nil
		}
	}
	k, secret := auth.NewKey(mcpgate.KeyUser, d.UserID, "", KeyName)
	k.Source = mcpgate.SourceDemo
	if err := tx.CreateKey(ctx, k); err != nil {
		return fmt.Errorf("create the demo key: %w", err)
	}
	d.KeyID, d.KeyHint, d.Key = k.ID, k.Hint, secret
	return nil
}
