package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// SQLSTATE codes of the violations sqlstore maps.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// dialect is how PostgreSQL reports violated constraints.
type dialect struct{}

// Violation classifies err by its SQLSTATE, and reads the columns of a
// unique constraint from the detail, which names them as
// "Key (agent_id, name)=(a, b) already exists.".
func (dialect) Violation(err error) sqlstore.Violation {
	var e *pgconn.PgError
	if !errors.As(err, &e) {
		return sqlstore.Violation{}
	}
	switch e.Code {
	case uniqueViolation:
		return sqlstore.Violation{Kind: sqlstore.UniqueViolation, Columns: detailColumns(e.Detail)}
	case foreignKeyViolation:
		return sqlstore.Violation{Kind: sqlstore.ForeignKeyViolation}
	}
	return sqlstore.Violation{}
}

// JSONListHolds asks whether the array contains a one-string array.
func (dialect) JSONListHolds(doc, key, value string) string {
	return fmt.Sprintf("((%s)::jsonb -> '%s') @> jsonb_build_array((%s)::text)", doc, key, value)
}

// detailColumns reads the column names out of a unique violation's detail.
func detailColumns(detail string) []string {
	list, ok := strings.CutPrefix(detail, "Key (")
	if !ok {
		return nil
	}
	end := strings.Index(list, ")=(")
	if end < 0 {
		return nil
	}
	var cols []string
	for c := range strings.SplitSeq(list[:end], ",") {
		cols = append(cols, strings.Trim(strings.TrimSpace(c), `"`))
	}
	return cols
}

var _ sqlstore.StatementCacher = dialect{}

// DriverCachesStatements reports true: pgx prepares each query once per
// connection and keeps it, so the Store need not.
func (dialect) DriverCachesStatements() bool { return true }

var _ sqlstore.OneStatementPoster = dialect{}

// PostsInOneStatement reports true: PostgreSQL runs a data-modifying WITH
// clause, so a message's seq, its row and the acknowledgement a reply
// makes are written by one statement, which holds the agent's seq lock
// for no round trip to the client.
func (dialect) PostsInOneStatement() bool { return true }

var _ sqlstore.SkipLocker = dialect{}

// SkipsLocked reports true: PostgreSQL has FOR UPDATE SKIP LOCKED, so a
// claim locks only the rows it takes and never waits for another's.
func (dialect) SkipsLocked() bool { return true }

var _ sqlstore.TupleIDer = dialect{}

// TupleID is ctid: the Store updates rows it found by key through their
// tuple IDs (sqlstore.TupleIDer).
func (dialect) TupleID() string { return "ctid" }
