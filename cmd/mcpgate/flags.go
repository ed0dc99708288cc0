package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
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

// open opens the store the flags name, creating a SQLite database that
// does not exist yet.
func (f *storeFlags) open(ctx context.Context) (mcpgate.Store, error) {
	if f.db == "" {
		return sqlite.Open(ctx, f.sqlitePath())
	}
	if dsn := f.postgresDSN(); dsn != "" {
		return postgres.Open(ctx, dsn)
	}
	// The value is not echoed: it may hold a password.
	return nil, fmt.Errorf("--db: give a PostgreSQL URL (postgres://user@host/db) or leave it empty for SQLite")
}

// sqlitePath is the SQLite database file in --data-dir.
func (f *storeFlags) sqlitePath() string { return filepath.Join(f.dataDir, "mcpgate.db") }

// missing reports whether the flags name a SQLite database that does not
// exist yet; a PostgreSQL database is never missing here (connecting says
// so if it is).
func (f *storeFlags) missing() bool {
	if f.db != "" {
		return false
	}
	_, err := os.Stat(f.sqlitePath())
	return errors.Is(err, os.ErrNotExist)
}

// openExisting opens the store of an admin command. A data dir with no
// database is refused (a usage error naming --data-dir) rather than given
// a new, empty one: it is most often a typo.
func (f *storeFlags) openExisting(ctx context.Context, env *Env) (mcpgate.Store, error) {
	if f.missing() {
		fmt.Fprintf(env.Stderr, "mcpgate: --data-dir %s holds no mcpgate database (%s): check the path (MCPGATE_DATA_DIR sets it too), "+
			"or create one with: mcpgate init --data-dir %s (serve creates one as well)\n", f.dataDir, filepath.Base(f.sqlitePath()), f.dataDir)
		return nil, errUsage
	}
	return f.open(ctx)
}

// openOrCreate opens serve's store and logs when it creates a new SQLite
// database, so that a mistyped --data-dir is noticed.
func (f *storeFlags) openOrCreate(ctx context.Context, logger *slog.Logger) (mcpgate.Store, error) {
	created := f.missing()
	s, err := f.open(ctx)
	if err == nil && created {
		logger.Info("created a new database; if you meant an existing one, check --data-dir", "path", f.sqlitePath())
	}
	return s, err
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
