package sqlite

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate/sqlstore"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect is how SQLite reports violated constraints.
type dialect struct{}

// Violation classifies err by its extended result code, and reads the
// columns of a unique constraint from the message, which names them as
// "UNIQUE constraint failed: users.name".
func (dialect) Violation(err error) sqlstore.Violation {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return sqlstore.Violation{}
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return sqlstore.Violation{Kind: sqlstore.UniqueViolation, Columns: uniqueColumns(e.Error())}
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return sqlstore.Violation{Kind: sqlstore.ForeignKeyViolation}
	}
	return sqlstore.Violation{}
}

// JSONListHolds looks through the array with json_each.
func (dialect) JSONListHolds(doc, key, value string) string {
	return fmt.Sprintf("EXISTS (SELECT 1 FROM json_each(%s, '$.%s') AS j WHERE j.value = %s)", doc, key, value)
}

// uniqueColumns reads the column names out of a unique constraint's
// message.
func uniqueColumns(msg string) []string {
	const marker = "UNIQUE constraint failed: "
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return nil
	}
	list := msg[i+len(marker):]
	if j := strings.Index(list, " ("); j >= 0 {
		list = list[:j]
	}
	var cols []string
	for c := range strings.SplitSeq(list, ",") {
		c = strings.TrimSpace(c)
		if k := strings.LastIndexByte(c, '.'); k >= 0 {
			c = c[k+1:]
		}
		cols = append(cols, c)
	}
	return cols
}

// InsertsRowByRow reports that SQLite, running in this process, writes a
// batch of rows fastest as one prepared statement executed once a row.
func (dialect) InsertsRowByRow() bool { return true }

var _ sqlstore.RowInserter = dialect{}

// GroupsCommits reports that SQLite, whose one writer connection runs every
// write transaction in turn, commits concurrent posts together.
func (dialect) GroupsCommits() bool { return true }

var _ sqlstore.GroupCommitter = dialect{}
