package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
)

const taskColumns = `id, agent_id, tool, identity, user_id, credential_kind, credential_id, session_id, args_hash,
	idempotency_key, status, status_message, result, error_code, error, created_at, updated_at, ttl_ms, expires_at,
	runner, heartbeat_at`

// unfinished is the condition of a task that has not ended.
const unfinished = `status IN ('working', 'input_required')`

// CreateTask stores t, working, setting its ID when empty and normalizing
// its times; ExpiresAt is CreatedAt + TTL.
func (s *Store) CreateTask(ctx context.Context, t *mcpgate.Task) error {
	if t.ID == "" {
		t.ID = mcpgate.NewID("task_")
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now()
	}
	t.Status, t.CreatedAt = mcpgate.TaskWorking, normalize(t.CreatedAt)
	t.UpdatedAt, t.HeartbeatAt, t.ExpiresAt = t.CreatedAt, t.CreatedAt, normalize(t.CreatedAt.Add(t.TTL))
	_, err := s.write.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, '', '', $13, $13, $14, $15, $16, $13)`,
		t.ID, t.AgentID, t.Tool, t.Identity, t.UserID, string(t.CredentialKind), t.CredentialID, t.SessionID,
		t.ArgsHash, t.IdempotencyKey, string(t.Status), t.StatusMessage, micros(t.CreatedAt),
		t.TTL.Milliseconds(), micros(t.ExpiresAt), t.Runner)
	if err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	return nil
}

// FindTask returns one task; ENOTFOUND if unknown.
func (s *Store) FindTask(ctx context.Context, id string) (*mcpgate.Task, error) {
	t, err := scanTask(s.read.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = $1`, id))
	return taskFound(t, err, id)
}

// FindTaskByKey returns the newest unexpired task of the caller's
// idempotency key on the agent; ENOTFOUND if none.
func (s *Store) FindTaskByKey(ctx context.Context, identity, agentID, key string, at time.Time) (*mcpgate.Task, error) {
	q := selectByKey(tupleID(s.d), "tasks", taskColumns,
		`identity = $1 AND agent_id = $2 AND idempotency_key = $3 AND idempotency_key <> '' AND expires_at > $4`,
		` ORDER BY created_at DESC, id DESC LIMIT 1`)
	t, err := scanTask(s.read.QueryRowContext(ctx, q, identity, agentID, key, micros(at)))
	return taskFound(t, err, key)
}

// taskFound turns a missing row into ENOTFOUND.
func taskFound(t *mcpgate.Task, err error, what string) (*mcpgate.Task, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "task %q not found", what)
	} else if err != nil {
		return nil, fmt.Errorf("find task %s: %w", what, err)
	}
	return t, nil
}

// taskListing lists tasks newest first.
var taskListing = listing{table: "tasks", columns: taskColumns, column: "created_at"}

// ListTasks returns the tasks f selects, newest first, one page at a time.
// The tasks of one owner's agents, when the filter adds no identity's, are
// read agent by agent (see ownerBranches).
func (s *Store) ListTasks(ctx context.Context, f mcpgate.TaskFilter) ([]*mcpgate.Task, string, error) {
	b, err := s.ownerBranches(ctx, &f.OwnerID, f.AgentID == "" && f.Identity == "")
	if err != nil {
		return nil, "", fmt.Errorf("list tasks: %w", err)
	}
	if b.empty() {
		return []*mcpgate.Task{}, "", nil
	}
	w, err := taskWhere(f)
	if err != nil {
		return nil, "", err
	}
	q, args := b.query(taskListing, w, pageSize(f.Limit)+1)
	return listPage(ctx, s, "tasks", q, args, f.Limit, scanTask,
		func(t *mcpgate.Task) (time.Time, string) { return t.CreatedAt, t.ID })
}

// taskWhere turns a filter into a WHERE clause.
func taskWhere(f mcpgate.TaskFilter) (*where, error) {
	w := &where{}
	w.equal("agent_id", f.AgentID)
	w.equal("status", string(f.Status))
	switch {
	case f.OwnerID != "" && f.Identity != "":
		w.args = append(w.args, f.OwnerID, f.Identity)
		n := len(w.args)
		w.conds = append(w.conds, fmt.Sprintf("(agent_id IN (SELECT id FROM agents WHERE owner_id = $%d) OR identity = $%d)", n-1, n))
	case f.OwnerID != "":
		w.cond("agent_id IN (SELECT id FROM agents WHERE owner_id = $%d)", f.OwnerID)
	default:
		w.equal("identity", f.Identity)
	}
	if f.Cursor != "" {
		if err := w.after("created_at", f.Cursor); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// FinishTask ends an unfinished task; the first end wins. ECONFLICT, with
// the row as it stands, when it had ended already.
func (s *Store) FinishTask(ctx context.Context, id string, e mcpgate.TaskEnd) (*mcpgate.Task, error) {
	if !e.Status.Terminal() {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "%q is not how a task ends", e.Status)
	}
	if e.At.IsZero() {
		e.At = now()
	}
	t, err := scanTask(s.write.QueryRowContext(ctx, `UPDATE tasks
		SET status = $2, status_message = $3, result = $4, error_code = $5, error = $6, updated_at = $7
		WHERE id = $1 AND `+unfinished+` RETURNING `+taskColumns,
		id, string(e.Status), e.Message, nullString(string(e.Result)), e.ErrorCode, e.Error, micros(e.At)))
	if !errors.Is(err, sql.ErrNoRows) {
		return taskFound(t, err, id)
	}
	held, err := s.FindTask(ctx, id)
	if err != nil {
		return nil, err
	}
	return held, mcpgate.Errorf(mcpgate.ECONFLICT, "task %s is %s already", id, held.Status)
}

// SetTaskMessage sets the status message of an unfinished task.
func (s *Store) SetTaskMessage(ctx context.Context, id, message string, at time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE tasks SET status_message = $2, updated_at = $3 WHERE id = $1 AND `+unfinished,
		id, message, micros(at))
	if err != nil {
		return fmt.Errorf("set task message %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	held, err := s.FindTask(ctx, id)
	if err != nil {
		return err
	}
	return mcpgate.Errorf(mcpgate.ECONFLICT, "task %s is %s already", id, held.Status)
}

// HeartbeatTasks sets the heartbeat of the runner's unfinished tasks.
func (s *Store) HeartbeatTasks(ctx context.Context, runner string, at time.Time) error {
	_, err := s.write.ExecContext(ctx, `UPDATE tasks SET heartbeat_at = $2 WHERE runner = $1 AND `+unfinished,
		runner, micros(at))
	if err != nil {
		return fmt.Errorf("heartbeat tasks: %w", err)
	}
	return nil
}

// FailStaleTasks fails the unfinished tasks of other runners whose
// heartbeat is before staleBefore.
func (s *Store) FailStaleTasks(ctx context.Context, staleBefore time.Time, except, message string, at time.Time) ([]*mcpgate.Task, error) {
	rows, err := s.write.QueryContext(ctx, `UPDATE tasks
		SET status = 'failed', status_message = $3, error_code = $4, error = $3, updated_at = $5
		WHERE `+unfinished+` AND heartbeat_at < $1 AND runner <> $2 RETURNING `+taskColumns,
		micros(staleBefore), except, message, mcpgate.EUNAVAILABLE, micros(at))
	if err != nil {
		return nil, fmt.Errorf("fail stale tasks: %w", err)
	}
	return collect(rows, scanTask)
}

// DeleteExpiredTasks deletes at most limit tasks expired at now.
func (s *Store) DeleteExpiredTasks(ctx context.Context, at time.Time, limit int) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM tasks WHERE id IN
		(SELECT id FROM tasks WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`, micros(at), limit)
	if err != nil {
		return 0, fmt.Errorf("delete expired tasks: %w", err)
	}
	return res.RowsAffected()
}

func scanTask(row scanner) (*mcpgate.Task, error) {
	var t mcpgate.Task
	var kind, status string
	var result sql.NullString
	var created, updated, ttl, expires, heartbeat int64
	err := row.Scan(&t.ID, &t.AgentID, &t.Tool, &t.Identity, &t.UserID, &kind, &t.CredentialID, &t.SessionID,
		&t.ArgsHash, &t.IdempotencyKey, &status, &t.StatusMessage, &result, &t.ErrorCode, &t.Error,
		&created, &updated, &ttl, &expires, &t.Runner, &heartbeat)
	if err != nil {
		return nil, err
	}
	t.CredentialKind, t.Status = mcpgate.CredentialKind(kind), mcpgate.TaskStatus(status)
	if result.Valid {
		t.Result = []byte(result.String)
	}
	t.CreatedAt, t.UpdatedAt, t.ExpiresAt = fromMicros(created), fromMicros(updated), fromMicros(expires)
	t.TTL, t.HeartbeatAt = time.Duration(ttl)*time.Millisecond, fromMicros(heartbeat)
	return &t, nil
}
