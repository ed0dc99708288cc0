package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
)

// streamEventColumns is the number of columns an event's row takes.
const streamEventColumns = 8

// PutStreamEvents stores events, setting their CreatedAt, and deletes for
// each floor the events of its replica and session before it, in one
// transaction: one multi-row insert, one delete a floor.
func (s *Store) PutStreamEvents(ctx context.Context, events []*mcpgate.StreamEvent, floors []mcpgate.StreamFloor) error {
	if len(events) == 0 && len(floors) == 0 {
		return nil
	}
	return s.withTx(ctx, func(tx *Store) error {
		if err := tx.insertStreamEvents(ctx, events); err != nil {
			return err
		}
		for _, f := range floors {
			if _, err := tx.write.ExecContext(ctx, `DELETE FROM stream_events WHERE session_id = $1 AND replica = $2 AND pos < $3`,
				f.Session, f.Replica, f.Pos); err != nil {
				return fmt.Errorf("prune stream events of session %s: %w", f.Session, err)
			}
		}
		return nil
	})
}

// insertStreamEvents inserts events with one statement.
func (s *Store) insertStreamEvents(ctx context.Context, events []*mcpgate.StreamEvent) error {
	if len(events) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO stream_events (session_id, replica, pos, stream_id, seq, get_stream, wire, created_at) VALUES `)
	args := make([]any, 0, len(events)*streamEventColumns)
	at := now()
	for i, ev := range events {
		ev.CreatedAt = at
		if i > 0 {
			q.WriteByte(',')
		}
		writePlaceholders(&q, i*streamEventColumns, streamEventColumns)
		args = append(args, ev.Session, ev.Replica, ev.Pos, ev.Stream, int64(ev.Seq), ev.Get, string(ev.Wire), micros(at))
	}
	if _, err := s.write.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("insert %d stream events: %w", len(events), err)
	}
	return nil
}

// writePlaceholders writes "($first+1, ..., $first+n)".
func writePlaceholders(q *strings.Builder, first, n int) {
	q.WriteByte('(')
	for j := 1; j <= n; j++ {
		if j > 1 {
			q.WriteByte(',')
		}
		q.WriteByte('$')
		q.WriteString(strconv.Itoa(first + j))
	}
	q.WriteByte(')')
}

// StreamEvents returns the stored events of the stream of session whose
// sequence number is at least from, in order.
func (s *Store) StreamEvents(ctx context.Context, session, stream string, from uint64) ([]*mcpgate.StreamEvent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT replica, pos, seq, get_stream, wire, created_at FROM stream_events
		WHERE session_id = $1 AND stream_id = $2 AND seq >= $3 ORDER BY seq`, session, stream, int64(from))
	if err != nil {
		return nil, fmt.Errorf("stream events of %s: %w", stream, err)
	}
	defer rows.Close()
	var out []*mcpgate.StreamEvent
	for rows.Next() {
		ev := &mcpgate.StreamEvent{Session: session, Stream: stream}
		var seq, at int64
		var wire string
		if err := rows.Scan(&ev.Replica, &ev.Pos, &seq, &ev.Get, &wire, &at); err != nil {
			return nil, fmt.Errorf("stream events of %s: %w", stream, err)
		}
		ev.Seq, ev.Wire, ev.CreatedAt = uint64(seq), []byte(wire), fromMicros(at)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stream events of %s: %w", stream, err)
	}
	return out, nil
}

// DeleteStreamEvents deletes the events created before before.
func (s *Store) DeleteStreamEvents(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM stream_events WHERE created_at < $1`, micros(before))
	if err != nil {
		return 0, fmt.Errorf("delete stream events: %w", err)
	}
	return res.RowsAffected()
}
