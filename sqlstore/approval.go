package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"time"

	"github.com/mcpgate/mcpgate"
)

const approvalColumns = `id, agent_id, skill, tool, arguments, args_hash, identity, user_id, credential_kind,
	credential_id, session_id, idempotency_key, state, requested_at, deadline, reviewer, reason, decided_at`

// CreateApproval stores a, pending, setting its ID when empty and
// normalizing its times.
func (s *Store) CreateApproval(ctx context.Context, a *mcpgate.Approval) error {
	if a.ID == "" {
		a.ID = mcpgate.NewID("apr_")
	}
	if a.RequestedAt.IsZero() {
		a.RequestedAt = now()
	}
	a.State, a.RequestedAt, a.Deadline = mcpgate.ApprovalPending, normalize(a.RequestedAt), normalize(a.Deadline)
	_, err := s.write.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, '', '', 0)`,
		a.ID, a.AgentID, a.Skill, a.Tool, string(a.Arguments), a.ArgsHash, a.Identity, a.UserID,
		string(a.CredentialKind), a.CredentialID, a.SessionID, a.IdempotencyKey, string(a.State),
		micros(a.RequestedAt), micros(a.Deadline))
	if err != nil {
		return fmt.Errorf("create approval: %w", err)
	}
	return nil
}

// FindApproval returns one approval; ENOTFOUND if unknown.
func (s *Store) FindApproval(ctx context.Context, id string) (*mcpgate.Approval, error) {
	a, err := scanApproval(s.read.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, id))
	return approvalFound(a, err, id)
}

// FindApprovalByKey returns the newest approval of a call with the
// idempotency key; ENOTFOUND if none.
func (s *Store) FindApprovalByKey(ctx context.Context, identity, agentID, key string) (*mcpgate.Approval, error) {
	q := selectByKey(tupleID(s.d), "approvals", approvalColumns,
		`identity = $1 AND agent_id = $2 AND idempotency_key = $3 AND idempotency_key <> ''`,
		` ORDER BY requested_at DESC, id DESC LIMIT 1`)
	a, err := scanApproval(s.read.QueryRowContext(ctx, q, identity, agentID, key))
	return approvalFound(a, err, key)
}

// approvalFound turns a missing row into ENOTFOUND.
func approvalFound(a *mcpgate.Approval, err error, what string) (*mcpgate.Approval, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "approval %q not found", what)
	} else if err != nil {
		return nil, fmt.Errorf("find approval %s: %w", what, err)
	}
	return a, nil
}

// approvalListing lists approvals newest first.
var approvalListing = listing{table: "approvals", columns: approvalColumns, column: "requested_at"}

// ListApprovals returns the approvals f selects, newest first. The
// approvals of one owner's agents are read agent by agent (see
// ownerBranches).
func (s *Store) ListApprovals(ctx context.Context, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error) {
	b, err := s.ownerBranches(ctx, &f.OwnerID, f.AgentID == "")
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	if b.empty() {
		return []*mcpgate.Approval{}, nil
	}
	return s.listApprovals(ctx, b, approvalWhere(f), f.Limit)
}

// ListReviewableApprovals returns the approvals f selects that user userID
// may decide, newest first: of the agents it owns, and of the skills whose
// approvers name it.
func (s *Store) ListReviewableApprovals(ctx context.Context, userID string, f mcpgate.ApprovalFilter) ([]*mcpgate.Approval, error) {
	w := approvalWhere(f)
	w.args = append(w.args, userID)
	n := len(w.args)
	w.conds = append(w.conds, fmt.Sprintf(`(agent_id IN (SELECT id FROM agents WHERE owner_id = $%d)
		OR EXISTS (SELECT 1 FROM skills s JOIN users u ON u.id = $%d
			WHERE s.agent_id = approvals.agent_id AND s.name = approvals.skill AND %s))`,
		n, n, s.d.JSONListHolds("s.spec", "approvers", "u.name")))
	return s.listApprovals(ctx, agentBranches{}, w, f.Limit)
}

// approvalWhere turns a filter into a WHERE clause.
func approvalWhere(f mcpgate.ApprovalFilter) *where {
	w := &where{}
	w.equal("state", string(f.State))
	w.equal("agent_id", f.AgentID)
	if f.OwnerID != "" {
		w.cond("agent_id IN (SELECT id FROM agents WHERE owner_id = $%d)", f.OwnerID)
	}
	return w
}

// listApprovals returns the approvals w selects, newest first, read
// through b, at most limit (see pageSize).
func (s *Store) listApprovals(ctx context.Context, b agentBranches, w *where, limit int) ([]*mcpgate.Approval, error) {
	limit = pageSize(limit)
	q, args := b.query(approvalListing, w, limit)
	rows, err := s.read.QueryContext(ctx, q+fmt.Sprintf(` LIMIT %d`, limit), args...)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return collect(rows, scanApproval)
}

// DecideApproval moves a pending approval to d.State; the first decision
// wins. ECONFLICT, with the row as it stands, when it was decided already.
func (s *Store) DecideApproval(ctx context.Context, id string, d mcpgate.Decision) (*mcpgate.Approval, error) {
	if d.State == mcpgate.ApprovalPending || !d.State.Valid() {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "%q is not a decision", d.State)
	}
	if d.At.IsZero() {
		d.At = now()
	}
	q := updateByKey(tupleID(s.d), "approvals", `state = $2, reviewer = $3, reason = $4, decided_at = $5`,
		`id = $1`, `state = 'pending'`, ` RETURNING `+approvalColumns)
	a, err := scanApproval(s.write.QueryRowContext(ctx, q, id, string(d.State), d.Reviewer, d.Reason, micros(d.At)))
	if !errors.Is(err, sql.ErrNoRows) {
		return approvalFound(a, err, id)
	}
	held, err := s.FindApproval(ctx, id)
	if err != nil {
		return nil, err
	}
	return held, mcpgate.Errorf(mcpgate.ECONFLICT, "approval %s was %s already", id, held.State)
}

// ExpireApprovals marks at most limit pending approvals past their
// deadline at now as expired and returns them.
func (s *Store) ExpireApprovals(ctx context.Context, at time.Time, limit int) ([]*mcpgate.Approval, error) {
	rows, err := s.write.QueryContext(ctx, `UPDATE approvals SET state = 'expired', decided_at = $1
		WHERE state = 'pending' AND id IN (SELECT id FROM approvals WHERE state = 'pending' AND deadline <= $1
		ORDER BY deadline LIMIT $2) RETURNING `+approvalColumns, micros(at), limit)
	if err != nil {
		return nil, fmt.Errorf("expire approvals: %w", err)
	}
	return collect(rows, scanApproval)
}

func scanApproval(row scanner) (*mcpgate.Approval, error) {
	var a mcpgate.Approval
	var args, kind, state string
	var requested, deadline, decided int64
	err := row.Scan(&a.ID, &a.AgentID, &a.Skill, &a.Tool, &args, &a.ArgsHash, &a.Identity, &a.UserID, &kind,
		&a.CredentialID, &a.SessionID, &a.IdempotencyKey, &state, &requested, &deadline, &a.Reviewer, &a.Reason, &decided)
	if err != nil {
		return nil, err
	}
	a.Arguments, a.CredentialKind, a.State = []byte(args), mcpgate.CredentialKind(kind), mcpgate.ApprovalState(state)
	a.RequestedAt, a.Deadline = fromMicros(requested), fromMicros(deadline)
	if decided != 0 {
		a.DecidedAt = fromMicros(decided)
	}
	return &a, nil
}
