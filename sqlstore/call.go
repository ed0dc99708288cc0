package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpgate/mcpgate"
)

const callColumns = `id, at, credential_kind, credential_id, user_id, agent_id, skill, tool, args_hash, arguments,
	outcome, duration_us, result_bytes, session_id, idempotency_key, error`

// callColumnCount is how many columns callColumns names.
const callColumnCount = 16

// callBatch is how many calls one INSERT writes, well under both engines'
// limits on bound parameters.
const callBatch = 100

// InsertCalls stores the records in batches, setting an ID on those
// without one and normalizing their times. A dialect that inserts row by
// row (SQLite) gets one transaction and one prepared statement executed
// once a record; the others one statement a batch of records.
func (s *Store) InsertCalls(ctx context.Context, calls []*mcpgate.CallRecord) error {
	if r, ok := s.d.(RowInserter); ok && r.InsertsRowByRow() {
		return s.insertCallsByRow(ctx, calls)
	}
	for len(calls) > 0 {
		n := min(len(calls), callBatch)
		if err := s.insertCalls(ctx, calls[:n]); err != nil {
			return err
		}
		calls = calls[n:]
	}
	return nil
}

// insertCallsHead begins the statement insertCalls writes.
const insertCallsHead = `INSERT INTO calls (` + callColumns + `) VALUES `

// insertCalls writes one batch in one statement.
func (s *Store) insertCalls(ctx context.Context, calls []*mcpgate.CallRecord) error {
	q := make([]byte, 0, len(insertCallsHead)+len(calls)*callColumnCount*5)
	q = append(q, insertCallsHead...)
	args := make([]any, 0, len(calls)*callColumnCount)
	for i, c := range calls {
		if i > 0 {
			q = append(q, ',')
		}
		q = append(q, '(')
		for j := range callColumnCount {
			if j > 0 {
				q = append(q, ',')
			}
			q = strconv.AppendInt(append(q, '$'), int64(i*callColumnCount+j+1), 10)
		}
		q = append(q, ')')
		args = append(args, callArgs(c)...)
	}
	if _, err := s.write.ExecContext(ctx, string(q), args...); err != nil {
		return fmt.Errorf("insert %d calls: %w", len(calls), err)
	}
	return nil
}

// RowInserter is implemented by a Dialect whose engine runs in this
// process (SQLite). There many rows cost least as one prepared statement
// executed once a row in a transaction: one statement of many rows has a
// new text for each batch size, and SQLite binds its hundreds of
// parameters one by one by name, which made a 100-row INSERT cost about
// 15 times more per row. Across a network (PostgreSQL) one statement of
// many rows saves a round trip a row.
type RowInserter interface {
	InsertsRowByRow() bool
}

// insertCall inserts one call record.
const insertCall = `INSERT INTO calls (` + callColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`

// preparer is what a transaction can do besides querying.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// callArgs fills in c's ID and time and returns its column values.
func callArgs(c *mcpgate.CallRecord) []any {
	prepareCall(c)
	return []any{c.ID, micros(c.Time), string(c.CredentialKind), c.CredentialID, c.UserID, c.AgentID, c.Skill, c.Tool,
		c.ArgsHash, textOrNull(string(c.Arguments)), c.Outcome, c.Duration.Microseconds(), int64(c.ResultBytes),
		c.SessionID, c.IdempotencyKey, c.Error}
}

// prepareCall sets a record's time and ID when they are missing, and its
// time as stored.
func prepareCall(c *mcpgate.CallRecord) {
	if c.Time.IsZero() {
		c.Time = now()
	}
	if c.ID == "" {
		c.ID = mcpgate.NewCallID(c.Time)
	}
	c.Time = normalize(c.Time)
}

// textOrNull is s, or NULL when empty, as a value every driver takes
// without conversion (a call record's columns are written in bulk, where
// database/sql's conversion of a Valuer or an int showed in profiles).
func textOrNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// callListing lists the audit log newest first.
var callListing = listing{table: "calls", columns: callColumns, column: "at"}

// ListCalls returns the calls f selects, newest first, one page at a time.
// The calls of one owner's agents are read agent by agent (see
// ownerBranches).
func (s *Store) ListCalls(ctx context.Context, f mcpgate.CallFilter) ([]*mcpgate.CallRecord, string, error) {
	b, err := s.ownerBranches(ctx, &f.OwnerID, f.AgentID == "")
	if err != nil {
		return nil, "", fmt.Errorf("list calls: %w", err)
	}
	if b.empty() {
		return []*mcpgate.CallRecord{}, "", nil
	}
	w, err := callWhere(f)
	if err != nil {
		return nil, "", err
	}
	q, args := b.query(callListing, w, pageSize(f.Limit)+1)
	return listPage(ctx, s, "calls", q, args, f.Limit, scanCall,
		func(c *mcpgate.CallRecord) (time.Time, string) { return c.Time, c.ID })
}

// CountCalls returns how many calls f selects, in one query, ignoring its
// Cursor and Limit.
func (s *Store) CountCalls(ctx context.Context, f mcpgate.CallFilter) (int, error) {
	f.Cursor = ""
	w, err := callWhere(f)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM calls`+w.String(), w.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count calls: %w", err)
	}
	return n, nil
}

// callWhere turns a filter into a WHERE clause.
func callWhere(f mcpgate.CallFilter) (*where, error) {
	w := &where{}
	w.equal("agent_id", f.AgentID)
	w.equal("tool", f.Tool)
	w.equal("user_id", f.UserID)
	w.equal("outcome", f.Outcome)
	if f.OwnerID != "" {
		w.cond("agent_id IN (SELECT id FROM agents WHERE owner_id = $%d)", f.OwnerID)
	}
	if !f.Since.IsZero() {
		w.cond("at >= $%d", micros(f.Since))
	}
	if !f.Until.IsZero() {
		w.cond("at < $%d", micros(f.Until))
	}
	if f.Cursor != "" {
		if err := w.after("at", f.Cursor); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// cond adds a condition whose one parameter is written %d in format.
func (w *where) cond(format string, value any) {
	w.args = append(w.args, value)
	w.conds = append(w.conds, fmt.Sprintf(format, len(w.args)))
}

// FindCall returns one call; ENOTFOUND if unknown.
func (s *Store) FindCall(ctx context.Context, id string) (*mcpgate.CallRecord, error) {
	c, err := scanCall(s.read.QueryRowContext(ctx, `SELECT `+callColumns+` FROM calls WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "call %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find call %s: %w", id, err)
	}
	return c, nil
}

// DeleteCallsBefore deletes at most limit of the oldest calls before t.
func (s *Store) DeleteCallsBefore(ctx context.Context, t time.Time, limit int) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM calls WHERE id IN
		(SELECT id FROM calls WHERE at < $1 ORDER BY at LIMIT $2)`, micros(t), limit)
	if err != nil {
		return 0, fmt.Errorf("delete calls before %v: %w", t, err)
	}
	return res.RowsAffected()
}

func scanCall(row scanner) (*mcpgate.CallRecord, error) {
	var c mcpgate.CallRecord
	var at, dur int64
	var args sql.NullString
	err := row.Scan(&c.ID, &at, &c.CredentialKind, &c.CredentialID, &c.UserID, &c.AgentID, &c.Skill, &c.Tool,
		&c.ArgsHash, &args, &c.Outcome, &dur, &c.ResultBytes, &c.SessionID, &c.IdempotencyKey, &c.Error)
	if err != nil {
		return nil, err
	}
	c.Time, c.Duration = fromMicros(at), time.Duration(dur)*time.Microsecond
	if args.Valid {
		c.Arguments = []byte(args.String)
	}
	return &c, nil
}
