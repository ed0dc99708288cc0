package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// runKey runs `mcpgate key create|list|show|set|revoke`.
func runKey(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "Usage: mcpgate key create (--user NAME | --agent ID) [--name LABEL] [--expires-in D] | key list | key show ID | key set ID | key revoke ID")
		return errUsage
	}
	switch args[0] {
	case "create":
		return runKeyCreate(ctx, env, args[1:])
	case "list":
		return runKeyList(ctx, env, args[1:])
	case "show":
		return runKeyShow(ctx, env, args[1:])
	case "set":
		return runKeySet(ctx, env, args[1:])
	case "revoke":
		return runKeyRevoke(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "mcpgate key: unknown subcommand %q\n", args[0])
	return errUsage
}

// runKeyCreate makes a key and prints only its secret on stdout.
func runKeyCreate(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	var user, agent, name string
	var expiresIn expiry
	fs := newFlagSet(env, "key create", "key create (--user NAME | --agent ID) [--name LABEL] [--expires-in DURATION]")
	sf.register(fs)
	fs.StringVar(&user, "user", "", "make a user key (oag_…) for this user")
	fs.StringVar(&agent, "agent", "", "make an agent key (bak_…) for this agent")
	fs.StringVar(&name, "name", "", "a label to recognize the key by")
	fs.Var(&expiresIn, "expires-in", "the key stops working after this long (a `DURATION` such as 90d or 12h; default: never)")
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	if (user == "") == (agent == "") || fs.NArg() > 0 {
		fmt.Fprintln(env.Stderr, "mcpgate key create: give exactly one of --user NAME or --agent ID")
		return errUsage
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		k, secret, err := newKeyFor(ctx, s, user, agent, name)
		if err != nil {
			return err
		}
		k.ExpiresAt = expiresIn.at(time.Now())
		if err := s.CreateKey(ctx, k); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, secret)
		return nil
	})
}

// newKeyFor makes a user key for the named user or an agent key for the
// agent, returning ENOTFOUND when the owner does not exist.
func newKeyFor(ctx context.Context, s mcpgate.Store, user, agentID, name string) (*mcpgate.APIKey, string, error) {
	if user != "" {
		u, err := s.FindUserByName(ctx, user)
		if err != nil {
			return nil, "", err
		}
		k, secret := auth.NewKey(mcpgate.KeyUser, u.ID, "", name)
		k.Source = mcpgate.SourceCLI
		return k, secret, nil
	}
	a, err := s.FindAgent(ctx, agentID)
	if err != nil {
		return nil, "", err
	}
	k, secret := auth.NewKey(mcpgate.KeyAgent, a.OwnerID, a.ID, name)
	k.Source = mcpgate.SourceCLI
	return k, secret, nil
}

// runKeyList prints keys, never their secrets.
func runKeyList(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	var user, agent string
	fs := newFlagSet(env, "key list", "key list [--user NAME | --agent ID]")
	sf.register(fs)
	fs.StringVar(&user, "user", "", "only this user's keys")
	fs.StringVar(&agent, "agent", "", "only this agent's keys")
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		f := mcpgate.KeyFilter{AgentID: agent}
		if user != "" {
			u, err := s.FindUserByName(ctx, user)
			if err != nil {
				return err
			}
			f.UserID = u.ID
		}
		keys, err := s.ListKeys(ctx, f)
		if err != nil {
			return err
		}
		return printKeys(ctx, env, s, keys)
	})
}

// printKeys writes a table of keys.
func printKeys(ctx context.Context, env *Env, s mcpgate.Store, keys []*mcpgate.APIKey) error {
	names := map[string]string{}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tHINT\tUSER\tAGENT\tNAME\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
	for _, k := range keys {
		if _, ok := names[k.UserID]; !ok && k.UserID != "" {
			if u, err := s.FindUserByID(ctx, k.UserID); err == nil {
				names[k.UserID] = u.Name
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Kind, k.Hint, orDash(names[k.UserID]),
			orDash(k.AgentID), orDash(k.Name), k.CreatedAt.Format(timeFmt), timeOrDash(k.LastUsedAt), timeOrDash(k.ExpiresAt), timeOrDash(k.RevokedAt))
	}
	return tw.Flush()
}

// runKeyRevoke revokes a key by ID.
func runKeyRevoke(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(env, "key revoke", "key revoke ID")
	sf.register(fs)
	id, err := parseWithName(fs, env, args, "key ID")
	if err != nil {
		return helpIsOK(err)
	}
	return withStore(ctx, env, &sf, func(s mcpgate.Store) error {
		if err := s.RevokeKey(ctx, id, time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "key %s revoked\n", id)
		return nil
	})
}

const timeFmt = "2006-01-02 15:04"

// orDash shows empty fields as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// timeOrDash formats an optional time.
func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(timeFmt)
}
