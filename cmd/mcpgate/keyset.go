package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
)

// expiry is the value of --expires-in: a Go duration such as 12h, or a
// number of days such as 90d.
type expiry struct {
	d   time.Duration
	set bool
}

// String shows the duration, "" when unset.
func (e *expiry) String() string {
	if !e.set {
		return ""
	}
	return e.d.String()
}

// Set parses a positive duration, with d for days.
func (e *expiry) Set(v string) error {
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
	}
	if err != nil || d <= 0 {
		return fmt.Errorf("give a positive duration such as 90d, 12h or 30m")
	}
	e.d, e.set = d, true
	return nil
}

// at is when a key given this expiry at now stops working, nil for never.
func (e *expiry) at(now time.Time) *time.Time {
	if !e.set {
		return nil
	}
	t := now.Add(e.d)
	return &t
}

// runKeyShow prints one key, never its secret.
func runKeyShow(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(env, "key show", "key show ID")
	sf.register(fs)
	id, err := parseWithName(fs, env, args, "key ID")
	if err != nil {
		return helpIsOK(err)
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		k, err := s.FindKey(ctx, id)
		if err != nil {
			return err
		}
		printKey(env, k, ownerName(ctx, s, k.UserID))
		return nil
	})
}

// printKey writes a key's fields, one a line.
func printKey(env *Env, k *mcpgate.APIKey, user string) {
	fmt.Fprintf(env.Stdout, "Key:       %s\nKind:      %s\nHint:      %s\nUser:      %s\nAgent:     %s\nName:      %s\nSource:    %s\n",
		k.ID, k.Kind, k.Hint, orDash(user), orDash(k.AgentID), orDash(k.Name), k.Source)
	fmt.Fprintf(env.Stdout, "Created:   %s\nLast used: %s\nExpires:   %s\nRevoked:   %s\n",
		k.CreatedAt.Local().Format(timeFmt), timeOrDash(k.LastUsedAt), timeOrDash(k.ExpiresAt), timeOrDash(k.RevokedAt))
}

// keyChange is what `mcpgate key set` changes of a key.
type keyChange struct {
	name      string
	nameSet   bool
	expiresIn expiry
	noExpiry  bool
}

// runKeySet changes a key's name or expiry. A running server sees the
// change within 2 seconds (its key cache's lifetime).
func runKeySet(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	var c keyChange
	fs := newFlagSet(env, "key set", "key set ID [--name LABEL] [--expires-in DURATION | --no-expiry]")
	sf.register(fs)
	fs.Func("name", "a new `LABEL` for the key", func(v string) error { c.name, c.nameSet = v, true; return nil })
	fs.Var(&c.expiresIn, "expires-in", "the key stops working this long from now (a `DURATION` such as 90d or 12h)")
	fs.BoolVar(&c.noExpiry, "no-expiry", false, "the key never expires")
	id, err := parseWithName(fs, env, args, "key ID")
	if err != nil {
		return helpIsOK(err)
	}
	if problem := c.problem(); problem != "" {
		fmt.Fprintf(env.Stderr, "mcpgate key set: %s\n", problem)
		fs.Usage()
		return errUsage
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		k, err := s.FindKey(ctx, id)
		if err != nil {
			return err
		}
		c.apply(k, time.Now())
		if err := s.UpdateKey(ctx, k); err != nil {
			return err
		}
		printKey(env, k, ownerName(ctx, s, k.UserID))
		return nil
	})
}

// problem says what is wrong with the flags, "" when nothing is.
func (c *keyChange) problem() string {
	switch {
	case c.expiresIn.set && c.noExpiry:
		return "give --expires-in or --no-expiry, not both"
	case !c.nameSet && !c.expiresIn.set && !c.noExpiry:
		return "nothing to change: give --name, --expires-in or --no-expiry"
	}
	return ""
}

// apply changes k as of now.
func (c *keyChange) apply(k *mcpgate.APIKey, now time.Time) {
	if c.nameSet {
		k.Name = c.name
	}
	if c.expiresIn.set || c.noExpiry {
		k.ExpiresAt = c.expiresIn.at(now)
	}
}
