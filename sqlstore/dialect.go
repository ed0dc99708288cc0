package sqlstore

import "slices"

// Dialect is what differs between the engines under a Store once the SQL is
// the same: how each reports a violated constraint.
type Dialect interface {
	// Violation says which constraint err violated; its Kind is
	// NoViolation when err is something else.
	Violation(err error) Violation
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
