package main

import (
	"context"
	"fmt"
)

// runInit runs `mcpgate init`: it creates the database (or brings an
// existing one's schema up to date) and exits, for set-up scripts that
// run the admin commands before the first serve.
func runInit(ctx context.Context, env *Env, args []string) error {
	var sf storeFlags
	fs := newFlagSet(env, "init", "init [--data-dir DIR | --db DSN]")
	sf.register(fs)
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "mcpgate init: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	created := sf.missing()
	s, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	switch {
	case created:
		fmt.Fprintf(env.Stderr, "created a new database: %s\n", sf.sqlitePath())
	case sf.db == "":
		fmt.Fprintf(env.Stderr, "database %s is ready\n", sf.sqlitePath())
	default:
		fmt.Fprintln(env.Stderr, "the PostgreSQL database is ready")
	}
	return nil
}
