package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mcpgate/mcpgate"
)

// runCalls runs `mcpgate calls list`.
func runCalls(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "list" {
		fmt.Fprintln(env.Stderr, "Usage: mcpgate calls list [--agent ID] [--tool NAME] [--user NAME] [--outcome O] [--since T] [--until T] [--limit N] [--cursor C] [--json]")
		return errUsage
	}
	return runCallsList(ctx, env, args[1:])
}

// callsListFlags are the flags of `calls list`.
type callsListFlags struct {
	store        storeFlags
	f            mcpgate.CallFilter
	user         string
	since, until string
	json         bool
}

// runCallsList prints one page of the audit log, newest first.
func runCallsList(ctx context.Context, env *Env, args []string) error {
	var c callsListFlags
	fs := newFlagSet(env, "calls list", "calls list [flags]")
	c.store.register(fs)
	fs.StringVar(&c.f.AgentID, "agent", "", "only calls of this agent")
	fs.StringVar(&c.f.Tool, "tool", "", "only calls of this tool")
	fs.StringVar(&c.user, "user", "", "only calls by this user (a name)")
	fs.StringVar(&c.f.Outcome, "outcome", "", "only calls with this outcome (ok, tool_error, invalid, timeout, unavailable, rate_limited, conflict, replayed, rejected)")
	fs.StringVar(&c.since, "since", "", "only calls at or after this RFC 3339 time, or this long ago (such as 1h)")
	fs.StringVar(&c.until, "until", "", "only calls before this RFC 3339 time, or this long ago")
	fs.IntVar(&c.f.Limit, "limit", 100, "page size, at most 1000")
	fs.StringVar(&c.f.Cursor, "cursor", "", "continue after the page that printed this cursor")
	fs.BoolVar(&c.json, "json", false, "print JSON: {calls, next_cursor}")
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	var err error
	if c.f.Since, err = sinceOrTime("--since", c.since); err == nil {
		c.f.Until, err = sinceOrTime("--until", c.until)
	}
	if err != nil || fs.NArg() > 0 {
		fmt.Fprintln(env.Stderr, "mcpgate calls list:", orText(err, "unexpected argument"))
		return errUsage
	}
	return withStore(ctx, env, &c.store, func(s mcpgate.Store) error { return listCalls(ctx, env, s, &c) })
}

// listCalls runs the query and prints it.
func listCalls(ctx context.Context, env *Env, s mcpgate.Store, c *callsListFlags) error {
	if c.user != "" {
		u, err := s.FindUserByName(ctx, c.user)
		if err != nil {
			return err
		}
		c.f.UserID = u.ID
	}
	calls, next, err := s.ListCalls(ctx, c.f)
	if err != nil {
		return err
	}
	if c.json {
		e := json.NewEncoder(env.Stdout)
		e.SetIndent("", "  ")
		return e.Encode(map[string]any{"calls": calls, "next_cursor": next})
	}
	return printCalls(env, calls, next)
}

// printCalls writes a table of calls and the next page's cursor.
func printCalls(env *Env, calls []*mcpgate.CallRecord, next string) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tID\tAGENT\tTOOL\tOUTCOME\tDURATION\tCREDENTIAL\tKEY\tERROR")
	for _, c := range calls {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Time.Format(timeFmt), c.ID, c.AgentID, c.Tool, c.Outcome,
			c.Duration.Round(time.Microsecond), orDash(string(c.CredentialKind)+" "+c.CredentialID), orDash(c.IdempotencyKey), orDash(c.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if next != "" {
		fmt.Fprintf(env.Stdout, "more: --cursor %s\n", next)
	}
	return nil
}

// sinceOrTime reads an RFC 3339 time or a duration before now; zero when
// empty.
func sinceOrTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return time.Now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, fmt.Errorf("%s must be an RFC 3339 time or a duration such as 1h", flag)
	}
	return t, nil
}

// orText returns err's text, or text when err is nil.
func orText(err error, text string) string {
	if err != nil {
		return err.Error()
	}
	return text
}
