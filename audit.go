package mcpgate

import (
	"context"
	"encoding/json"
	"time"
)

// The outcomes of a tools/call as the audit log records them.
const (
	OutcomeOK          = "ok"           // the tool answered
	OutcomeToolError   = "tool_error"   // the tool answered with isError
	OutcomeInvalid     = "invalid"      // the arguments were refused before any backend ran
	OutcomeTimeout     = "timeout"      // the backend did not answer in time
	OutcomeUnavailable = "unavailable"  // the backend could not take the call
	OutcomeRateLimited = "rate_limited" // the caller was over its rate limit
	OutcomeConflict    = "conflict"     // the idempotency key was in flight or bound to other arguments
	OutcomeReplayed    = "replayed"     // a stored result was returned for an idempotency key
	OutcomeRejected    = "rejected"     // refused for any other reason (unknown tool, approval, canceled, internal)
)

// CallRecord is one row of the audit log: who called which tool, with what
// (values that look secret redacted), and how it ended. It never holds a
// credential's secret.
type CallRecord struct {
	ID             string         `json:"id"`
	Time           time.Time      `json:"time"`
	CredentialKind CredentialKind `json:"credential_kind,omitempty"`
	CredentialID   string         `json:"credential_id,omitempty"`
	UserID         string         `json:"user_id,omitempty"`
	AgentID        string         `json:"agent_id"`
	Skill          string         `json:"skill,omitempty"`
	Tool           string         `json:"tool"`
	// ArgsHash is the hash of the tool name and canonical arguments that
	// binds an idempotency key (HashArguments).
	ArgsHash string `json:"args_hash,omitempty"`
	// Arguments are the call's arguments with sensitive values replaced by
	// "[REDACTED]".
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Outcome is one of the Outcome* constants.
	Outcome        string        `json:"outcome"`
	Duration       time.Duration `json:"duration_us"`
	ResultBytes    int           `json:"result_bytes"`
	SessionID      string        `json:"session_id,omitempty"`
	IdempotencyKey string        `json:"idempotency_key,omitempty"`
	Error          string        `json:"error,omitempty"`
}

// MarshalJSON writes Duration in microseconds.
func (r *CallRecord) MarshalJSON() ([]byte, error) {
	type plain CallRecord
	return json.Marshal(&struct {
		*plain
		Duration int64 `json:"duration_us"`
	}{(*plain)(r), r.Duration.Microseconds()})
}

// CallFilter selects audit rows. Empty fields match everything.
type CallFilter struct {
	AgentID string
	// OwnerID keeps the calls of agents this user owns now.
	OwnerID string
	Tool    string
	UserID  string
	Outcome string
	// Since and Until bound Time: Since <= Time < Until.
	Since, Until time.Time
	// Cursor continues a listing where the previous page ended.
	Cursor string
	// Limit is the page size; 0 means 100, and at most 1000 are returned.
	Limit int
}

// CallStore keeps the audit log.
type CallStore interface {
	// InsertCalls stores the records, setting an ID on those without one.
	InsertCalls(ctx context.Context, calls []*CallRecord) error
	// ListCalls returns the calls f selects, newest first, and the cursor
	// of the next page ("" after the last). Returns EINVALID for a
	// malformed cursor.
	ListCalls(ctx context.Context, f CallFilter) ([]*CallRecord, string, error)
	// CountCalls returns how many calls f selects, in one query, ignoring
	// its Cursor and Limit.
	CountCalls(ctx context.Context, f CallFilter) (int, error)
	// FindCall returns one call; ENOTFOUND if unknown.
	FindCall(ctx context.Context, id string) (*CallRecord, error)
	// DeleteCallsBefore deletes at most limit calls older than t and
	// returns how many went, so that a sweep can work in small batches.
	DeleteCallsBefore(ctx context.Context, t time.Time, limit int) (int64, error)
}

// NewCallID returns the ID of a call that started at t: "call_" and the
// time-ordered digits of NewOrderedID, so that audit rows go in at the end
// of the primary key's index and IDs sort as their calls started.
func NewCallID(t time.Time) string { return NewOrderedID("call_", t) }
