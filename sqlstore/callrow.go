package sqlstore

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// insertCallsByRow stores the records in one transaction through one
// prepared statement executed once a record. Outside a transaction it
// runs on one connection of the writer through the driver itself:
// database/sql's conversion, checks and locks of every argument cost
// about as much as a third of SQLite's own work on a row (profiles of the
// audit log's writer), and a batch on one connection needs none of them.
func (s *Store) insertCallsByRow(ctx context.Context, calls []*mcpgate.CallRecord) error {
	if len(calls) == 0 {
		return nil
	}
	if s.inTx {
		return s.insertCallsInTx(ctx, calls)
	}
	s.settle()
	conn, err := s.writeDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("insert %d calls: %w", len(calls), err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error { return insertCallsOnDriver(ctx, dc, calls) })
}

// insertCallsInTx stores the records through the transaction s is bound to.
func (s *Store) insertCallsInTx(ctx context.Context, calls []*mcpgate.CallRecord) error {
	st, err := s.write.(preparer).PrepareContext(ctx, insertCall)
	if err != nil {
		return fmt.Errorf("prepare insert of calls: %w", err)
	}
	defer st.Close()
	for _, c := range calls {
		if _, err := st.ExecContext(ctx, callArgs(c)...); err != nil {
			return fmt.Errorf("insert %d calls: %w", len(calls), err)
		}
	}
	return nil
}

// insertCallRow is insertCall for execCallRows, in SQLite's own syntax
// (the one engine that inserts row by row). Its parameters are anonymous
// because modernc's driver reads a named one's name into a new string at
// every bind, and it binds an empty text as NULL because the driver copies
// every text it binds into memory of its own, an empty one too (most
// records have several: no key, no error).
const insertCallRow = `INSERT INTO calls (` + callColumns + `) VALUES (?, ?, ifnull(?, ''), ifnull(?, ''), ifnull(?, ''),
	ifnull(?, ''), ifnull(?, ''), ifnull(?, ''), ifnull(?, ''), ?, ifnull(?, ''), ?, ?, ifnull(?, ''), ifnull(?, ''), ifnull(?, ''))`

// rawConn is what insertCallsOnDriver needs of a driver's connection;
// every driver the gateway uses has it.
type rawConn interface {
	driver.ConnBeginTx
	driver.ConnPrepareContext
}

// insertCallsOnDriver stores the records in one transaction of the
// driver's connection dc, committed when every row went in. Its
// statements run detached (see detach), and ctx is checked between rows
// instead.
func insertCallsOnDriver(ctx context.Context, dc any, calls []*mcpgate.CallRecord) error {
	conn, ok := dc.(rawConn)
	if !ok {
		return fmt.Errorf("insert calls: driver connection %T cannot begin or prepare with a context", dc)
	}
	tx, err := conn.BeginTx(detach(ctx), driver.TxOptions{})
	if err != nil {
		return fmt.Errorf("begin insert of %d calls: %w", len(calls), err)
	}
	if err := execCallRows(ctx, conn, calls); err != nil {
		_ = tx.Rollback() // the insert's error is the one that matters
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit %d calls: %w", len(calls), err)
	}
	return nil
}

// execCallRows executes the prepared insert once a record.
func execCallRows(ctx context.Context, conn driver.ConnPrepareContext, calls []*mcpgate.CallRecord) error {
	st, err := conn.PrepareContext(detach(ctx), insertCallRow)
	if err != nil {
		return fmt.Errorf("prepare insert of calls: %w", err)
	}
	defer st.Close()
	exec, ok := st.(driver.StmtExecContext)
	if !ok {
		return fmt.Errorf("insert calls: driver statement %T cannot execute with a context", st)
	}
	values := make([]driver.NamedValue, callColumnCount)
	for i := range values {
		values[i].Ordinal = i + 1
	}
	detached := detach(ctx)
	for _, c := range calls {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("insert %d calls: %w", len(calls), err)
		}
		setCallRow(values, c)
		if _, err := exec.ExecContext(detached, values); err != nil {
			return fmt.Errorf("insert %d calls: %w", len(calls), err)
		}
	}
	return nil
}

// setCallRow sets values, which hold the previous row's, to c's columns in
// callColumns' order, an empty text as NULL. A text equal to the previous
// row's keeps its value: a batch's rows mostly share their credential,
// user, agent, skill, tool, outcome and session, and each string handed
// to the driver anew is an allocation (a third of the writer's).
func setCallRow(values []driver.NamedValue, c *mcpgate.CallRecord) {
	prepareCall(c)
	text := func(i int, s string) {
		if prev, ok := values[i].Value.(string); !ok || prev != s {
			values[i].Value = textOrNull(s)
		}
	}
	text(0, c.ID)
	values[1].Value = micros(c.Time)
	text(2, string(c.CredentialKind))
	text(3, c.CredentialID)
	text(4, c.UserID)
	text(5, c.AgentID)
	text(6, c.Skill)
	text(7, c.Tool)
	text(8, c.ArgsHash)
	text(9, string(c.Arguments))
	text(10, c.Outcome)
	values[11].Value = c.Duration.Microseconds()
	values[12].Value = int64(c.ResultBytes)
	text(13, c.SessionID)
	text(14, c.IdempotencyKey)
	text(15, c.Error)
}
