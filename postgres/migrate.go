package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// A replica waiting for another's migration retries the lock every
// lockRetrySeconds, lockRetries times (5 minutes) before giving up.
const (
	lockRetrySeconds = 1
	lockRetries      = 300
)

// migrate applies the pending migrations while holding a session-level
// advisory lock, so that of several replicas starting at once one migrates
// and the others wait, then find nothing to do.
func migrate(ctx context.Context, db *sql.DB) error {
	sub := sqlstore.Migrations("postgres")
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(lockRetrySeconds, lockRetries))
	if err != nil {
		return fmt.Errorf("goose locker: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("goose: %w", err)
	}
	_, err = p.Up(ctx)
	return err
}
