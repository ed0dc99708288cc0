package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/sqlite"
)

// storeFlags are the flags every command takes to find the database.
type storeFlags struct {
	dataDir string
	db      string
}

// register adds --data-dir and --db to fs.
func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dataDir, "data-dir", "./mcpgate-data", "directory for the embedded SQLite database and demo files")
	fs.StringVar(&f.db, "db", "", "PostgreSQL DSN (postgres://…); empty uses SQLite in --data-dir")
}

// open opens the store the flags name.
func (f *storeFlags) open(ctx context.Context) (mcpgate.Store, error) {
	if f.db == "" {
		return sqlite.Open(ctx, filepath.Join(f.dataDir, "mcpgate.db"))
	}
	if dsn := f.postgresDSN(); dsn != "" {
		return postgres.Open(ctx, dsn)
	}
	// The value is not echoed: it may hold a password.
	return nil, fmt.Errorf("--db: give a PostgreSQL URL (postgres://user@host/db) or leave it empty for SQLite")
}

// postgresDSN returns the PostgreSQL URL of --db, or "" for SQLite.
func (f *storeFlags) postgresDSN() string {
	if strings.HasPrefix(f.db, "postgres://") || strings.HasPrefix(f.db, "postgresql://") {
		return f.db
	}
	return ""
}

// parseFlags parses args, then fills every flag not given on the command
// line from MCPGATE_<NAME> in the environment (--data-dir reads
// MCPGATE_DATA_DIR). Returns errUsage for bad flags and flag.ErrHelp for -h.
func parseFlags(fs *flag.FlagSet, env *Env, args []string) error {
	fs.SetOutput(env.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var bad error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || bad != nil {
			return
		}
		name := "MCPGATE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := env.LookupEnv(name); ok {
			if err := fs.Set(f.Name, v); err != nil {
				bad = fmt.Errorf("%s=%q: %v", name, v, err)
			}
		}
	})
	return bad
}

// newFlagSet returns a flag set for a subcommand with a usage line.
func newFlagSet(env *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: mcpgate %s\n\nFlags (each also read from MCPGATE_<FLAG>):\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// stringList is a repeatable or comma-separated string flag.
type stringList []string

// String joins the list.
func (l *stringList) String() string { return strings.Join(*l, ",") }

// Set adds comma-separated values.
func (l *stringList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
