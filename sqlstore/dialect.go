package sqlstore

import "slices"

// Dialect is what differs between the engines under a Store once the SQL is
// the same: how each reports a violated constraint, and how each looks
// into a JSON document.
type Dialect interface {
	// Violation says which constraint err violated; its Kind is
	// NoViolation when err is something else.
	Violation(err error) Violation
	// JSONListHolds returns an SQL condition that holds when the JSON
	// object in the text expression doc has under key (a constant, never
	// input) an array holding the string expression value.
	JSONListHolds(doc, key, value string) string
}

// ViolationKind says which sort of constraint a statement violated.
type ViolationKind int

// The kinds of violated constraint a Store maps to user-facing errors.
const (
	NoViolation ViolationKind = iota
	UniqueViolation
	ForeignKeyViolation
)

// Violation describes a violated constraint.
type Violation struct {
	Kind ViolationKind
	// Columns are the columns of a violated unique constraint, when the
	// engine names them.
	Columns []string
}

// On reports whether the violated unique constraint covers column.
func (v Violation) On(column string) bool {
	return slices.Contains(v.Columns, column)
}

// OneStatementPoster is implemented by a Dialect whose engine runs
// data-modifying WITH clauses (PostgreSQL); the Store then posts a
// message that needs no delivery check in one statement.
type OneStatementPoster interface {
	PostsInOneStatement() bool
}

// postsInOneStatement reports whether d's engine can post a message in one
// statement.
func postsInOneStatement(d Dialect) bool {
	p, ok := d.(OneStatementPoster)
	return ok && p.PostsInOneStatement()
}

// SkipLocker is implemented by a Dialect whose engine locks rows and can
// skip those another transaction holds (FOR UPDATE SKIP LOCKED); the Store
// then claims messages in one statement without the agent's seq lock.
type SkipLocker interface {
	SkipsLocked() bool
}

// skipsLocked reports whether d's engine can skip locked rows.
func skipsLocked(d Dialect) bool {
	l, ok := d.(SkipLocker)
	return ok && l.SkipsLocked()
}

// TupleIDer is implemented by a Dialect whose engine names the version of
// a row a statement read by a column of its own (PostgreSQL's ctid). The
// Store then finds the rows an update (or a lookup by key, see
// selectByKey) needs by their key first and reaches them through that
// column, a plan that no statistics of the table can turn into a scan of
// an index range: planned while the table was small, as the cached
// statements of a new database are, the same update could otherwise scan
// all of an agent's messages.
type TupleIDer interface {
	TupleID() string
}

// tupleID returns d's tuple ID column, or "" when it has none.
func tupleID(d Dialect) string {
	if t, ok := d.(TupleIDer); ok {
		return t.TupleID()
	}
	return ""
}
