package main

import (
	"context"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// userChange is what `mcpgate user set` changes of a user.
type userChange struct {
	admin, noAdmin bool
	pwEnv          string
	pwStdin        bool
}

// runUserSet gives an existing user a password, or makes it an
// administrator or no longer one.
func runUserSet(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	var c userChange
	fs := newFlagSet(env, "user set", "user set NAME [--password-env VAR | --password-stdin] [--admin | --no-admin]")
	sf.register(fs)
	fs.BoolVar(&c.admin, "admin", false, "make the user an administrator")
	fs.BoolVar(&c.noAdmin, "no-admin", false, "make the user no longer an administrator")
	fs.StringVar(&c.pwEnv, "password-env", "", "set the user's password from this environment variable")
	fs.BoolVar(&c.pwStdin, "password-stdin", false, "set the user's password from the first line of standard input")
	name, err := parseWithName(fs, env, args, "NAME")
	if err != nil {
		return helpIsOK(err)
	}
	if problem := c.problem(); problem != "" {
		fmt.Fprintf(env.Stderr, "mcpgate user set: %s\n", problem)
		fs.Usage()
		return errUsage
	}
	hash, err := readPassword(env, c.pwEnv, c.pwStdin)
	if err != nil {
		return err
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		u, err := s.FindUserByName(ctx, name)
		if err != nil {
			return err
		}
		c.apply(u, hash)
		if err := s.UpdateUser(ctx, u); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "user %s updated: admin %v, password %v\n", u.Name, u.Admin, u.PasswordHash != "")
		return nil
	})
}

// problem says what is wrong with the flags, "" when nothing is.
func (c *userChange) problem() string {
	switch {
	case c.admin && c.noAdmin:
		return "give --admin or --no-admin, not both"
	case c.pwEnv != "" && c.pwStdin:
		return "give --password-env or --password-stdin, not both"
	case !c.admin && !c.noAdmin && c.pwEnv == "" && !c.pwStdin:
		return "nothing to change: give --password-env VAR, --password-stdin, --admin or --no-admin"
	}
	return ""
}

// apply changes u; hash is the new password's hash, "" to keep it.
func (c *userChange) apply(u *mcpgate.User, hash string) {
	if hash != "" {
		u.PasswordHash = hash
	}
	if c.admin || c.noAdmin {
		u.Admin = c.admin
	}
}
