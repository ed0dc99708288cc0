package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
)

// claimQuery marks the oldest claimable messages of an agent's inbox, up
// to limit, delivered and returns them. The outer WHERE repeats the
// conditions, so that each row is checked again when it is updated.
func claimQuery(limit int) string {
	return `UPDATE messages SET delivered_at = $1, attempts = attempts + 1
	WHERE id IN (` + claimableQuery(limit) + `)
	AND acked_at IS NULL AND (delivered_at IS NULL OR delivered_at <= $3)
	RETURNING ` + messageColumns
}

// claimableQuery selects, as pid, the oldest claimable messages of agent
// $2's inbox (of skill $4, or of all when it is empty), delivered at $3 or
// before or never, up to limit: the oldest never delivered, which
// messages_claimable gives in seq order, and the oldest delivered at $3
// or before, merged. One condition of both would walk every message of
// the inbox in seq order, the calls in flight among them.
func claimableQuery(limit int) string {
	return `SELECT pid FROM (SELECT * FROM (` + claimableArm("delivered_at IS NULL", limit) + `) AS never
		UNION ALL SELECT * FROM (` + claimableArm("delivered_at <= $3", limit) + `) AS expired) AS c
		ORDER BY seq` + limitClause(limit)
}

// claimableArm selects, as pid and seq, the oldest messages of agent $2's
// inbox (of skill $4, or of all when it is empty) delivered when says,
// up to limit.
func claimableArm(when string, limit int) string {
	return `SELECT id AS pid, seq FROM messages WHERE ` + inboxOf("$2", "$4") + ` AND ` + when + `
		ORDER BY seq` + limitClause(limit)
}

// inboxOf is the condition that holds for the messages of the agent's
// inbox (of the skill, or of all when it is empty) not acknowledged yet:
// its chat_messages and cancels. Each argument is a parameter of the
// query; messages_claimable (SQLite) and messages_inbox (PostgreSQL)
// index these rows.
func inboxOf(agent, skill string) string {
	return `agent_id = ` + agent + ` AND acked_at IS NULL AND type IN ('chat_message', 'cancel')
		AND (` + skill + ` = '' OR skill = ` + skill + `)`
}

// claimSkipLockedQuery is claimQuery for an engine that skips locked
// rows: the WITH clause locks the rows it picks, passing over those
// another transaction holds, and is run once (a LIMIT under IN is not
// bound to be). It cannot pick from a UNION, which FOR UPDATE does not
// take, so it asks for both kinds of claimable message in one condition,
// which PostgreSQL answers through messages_inbox in seq order: it visits
// the agent's calls in flight older than the messages it takes. It has no
// messages_claimable (migration 00021 says why).
//
// The update finds the rows it picked by key, their tuple IDs when the
// engine has them (tid, see TupleIDer), which nobody else can change
// while the statement holds the rows' locks. Joined by id instead,
// PostgreSQL's generic plan made while the table was empty (pgx caches
// each connection's statements) read the whole table for every claim. A
// row updated between the statement's snapshot and its lock is locked as
// its newest version, which the update does not see: the claim leaves
// it, and the next one takes it.
func claimSkipLockedQuery(limit int, tid string) string {
	if tid == "" {
		tid = "id"
	}
	return `WITH picked AS (SELECT ` + tid + ` AS k FROM messages
		WHERE ` + inboxOf("$2", "$4") + ` AND (delivered_at IS NULL OR delivered_at <= $3)
		ORDER BY seq` + limitClause(limit) + ` FOR UPDATE SKIP LOCKED)
	UPDATE messages SET delivered_at = $1, attempts = attempts + 1
	FROM picked WHERE ` + tid + ` = picked.k
	AND acked_at IS NULL AND (delivered_at IS NULL OR delivered_at <= $3)
	RETURNING ` + messageColumns
}

// ClaimMessages returns up to limit messages for the agent's workers
// (chat_message and cancel, of one skill or of all when skill is "") that
// are neither acknowledged nor delivered after now-visibility, oldest
// first, and marks them delivered at now, counting the attempt.
//
// Concurrent claims never return the same message. On SQLite, whose one
// writer runs them in turn, each first locks the agent's seq counter, as
// posts do. On PostgreSQL a claim is one statement that locks only the
// rows it takes, skipping those another transaction holds (another claim,
// a reply acknowledging one, a stream renewing or releasing it): it never
// waits for a row, so it cannot deadlock, and it does not take the
// counter, which posts hold. Skipping a held row loses nothing: its
// holder is delivering, answering or keeping it.
func (s *Store) ClaimMessages(ctx context.Context, agentID, skill string, now time.Time, visibility time.Duration, limit int) ([]*mcpgate.Message, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	args := []any{micros(now), agentID, micros(now.Add(-visibility)), skill}
	var msgs []*mcpgate.Message
	var err error
	if skipsLocked(s.d) {
		msgs, err = s.claim(ctx, claimSkipLockedQuery(limit, tupleID(s.d)), args)
	} else {
		msgs, err = s.claimInTurn(ctx, claimQuery(limit), args)
	}
	if err != nil {
		return nil, fmt.Errorf("claim messages of %s: %w", agentID, err)
	}
	slices.SortFunc(msgs, func(a, b *mcpgate.Message) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, m := range msgs {
		s.inbox.delivered(agentID, m.ID, micros(now))
	}
	return msgs, nil
}

// claim runs the claim query q with args.
func (s *Store) claim(ctx context.Context, q string, args []any) ([]*mcpgate.Message, error) {
	rows, err := s.write.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanMessage)
}

// claimInTurn runs the claim query q with args after locking the agent's
// seq counter ($2), in one transaction.
func (s *Store) claimInTurn(ctx context.Context, q string, args []any) ([]*mcpgate.Message, error) {
	var msgs []*mcpgate.Message
	err := s.withTx(ctx, func(tx *Store) error {
		if _, err := tx.write.ExecContext(ctx, `UPDATE message_seqs SET seq = seq WHERE agent_id = $1`, args[1]); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		var err error
		msgs, err = tx.claim(ctx, q, args)
		return err
	})
	return msgs, err
}

// RenewMessages marks the messages of held (message ID → the delivery time
// last written for it) that are unacknowledged and still delivered at that
// time delivered at now, and returns their IDs: the worker's stream that
// holds them is open, so their visibility starts again. A message claimed
// again since (its visibility had passed) is left to its new holder.
func (s *Store) RenewMessages(ctx context.Context, agentID string, held map[string]time.Time, now time.Time) ([]string, error) {
	if len(held) == 0 {
		return nil, nil
	}
	var ids []string
	err := s.withHeld(ctx, agentID, held, "delivered_at = $2", []any{micros(now)}, func(rows *sql.Rows) error {
		var err error
		ids, err = collect(rows, func(sc scanner) (string, error) {
			var id string
			return id, sc.Scan(&id)
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("renew messages of %s: %w", agentID, err)
	}
	for _, id := range ids {
		s.inbox.delivered(agentID, id, micros(now))
	}
	return ids, nil
}

// ReleaseMessages makes the messages of held that are unacknowledged and
// still delivered at the time given for them claimable at once: the
// worker's stream that held them ended.
func (s *Store) ReleaseMessages(ctx context.Context, agentID string, held map[string]time.Time) error {
	if len(held) == 0 {
		return nil
	}
	// Before and after: a check that ran in between must not find the
	// inbox free.
	s.inbox.unfree(agentID)
	defer s.inbox.unfree(agentID)
	err := s.withHeld(ctx, agentID, held, "delivered_at = NULL", nil, func(rows *sql.Rows) error { return rows.Close() })
	if err != nil {
		return fmt.Errorf("release messages of %s: %w", agentID, err)
	}
	return nil
}

// withHeld runs "UPDATE messages SET <set>" on the unacknowledged messages
// of held still delivered at their time, after taking the agent's counter
// lock as claims do, and passes the updated IDs to fn. The agent is $1, and
// set's own arguments $2 on.
func (s *Store) withHeld(ctx context.Context, agentID string, held map[string]time.Time, set string, setArgs []any, fn func(*sql.Rows) error) error {
	args := append([]any{agentID}, setArgs...)
	var match, ids []string
	for id, at := range held {
		args = append(args, id, micros(at))
		match = append(match, fmt.Sprintf("(id = $%d AND delivered_at = $%d)", len(args)-1, len(args)))
		ids = append(ids, fmt.Sprintf("$%d", len(args)-1))
	}
	q := updateByKey(tupleID(s.d), "messages", set, `id IN (`+strings.Join(ids, ", ")+`)`,
		`agent_id = $1 AND acked_at IS NULL AND (`+strings.Join(match, " OR ")+`)`, ` RETURNING id`)
	return s.withTx(ctx, func(tx *Store) error {
		if _, err := tx.write.ExecContext(ctx, `UPDATE message_seqs SET seq = seq WHERE agent_id = $1`, agentID); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		rows, err := tx.write.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		return fn(rows)
	})
}

// AckMessage marks a message to the agent's workers acknowledged, keeping
// the first acknowledgement's time. Returns ENOTFOUND if the agent has no
// such message.
func (s *Store) AckMessage(ctx context.Context, agentID, id string) error {
	q := updateByKey(tupleID(s.d), "messages", `acked_at = COALESCE(acked_at, $3)`, `id = $1`,
		`agent_id = $2 AND type IN ('chat_message', 'cancel')`, ``)
	res, err := s.write.ExecContext(ctx, q, id, agentID, micros(now()))
	if err != nil {
		return fmt.Errorf("ack message %s: %w", id, err)
	}
	s.inbox.acked(agentID, id)
	return affected(res, mcpgate.Errorf(mcpgate.ENOTFOUND, "agent %q has no message %q", agentID, id))
}

// ack marks the message id acknowledged at t, unless it is already.
func (s *Store) ack(ctx context.Context, agentID, id string, t time.Time) error {
	_, err := s.write.ExecContext(ctx, `UPDATE messages SET acked_at = COALESCE(acked_at, $2) WHERE id = $1`, id, micros(t))
	if err != nil {
		return fmt.Errorf("ack message %s: %w", id, err)
	}
	s.inbox.acked(agentID, id)
	return nil
}
