package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/pressly/goose/v3"
)

// migrateAttempts bounds how often migrate retries when another process is
// migrating the same file at the same time.
const migrateAttempts = 3

// migrate applies the pending migrations. SQLite has no advisory lock for
// goose to take, so when two processes migrate a new file together, the
// second one waits for the first one's transaction (busy_timeout), fails on
// the tables it created, and then finds nothing left to do.
func migrate(ctx context.Context, db *sql.DB) error {
	sub := sqlstore.Migrations("sqlite")
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("goose: %w", err)
	}
	for attempt := 1; ; attempt++ {
		_, err = p.Up(ctx)
		if err == nil {
			return nil
		}
		pending, perr := p.HasPending(ctx)
		if perr == nil && !pending {
			return nil
		} else if attempt == migrateAttempts {
			return err
		}
	}
}
