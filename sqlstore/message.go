package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// Seq ordering. A message's Seq comes from its agent's row in message_seqs,
// incremented inside the transaction that inserts the message. The row lock
// that increment takes is held until commit, so the posts of one agent
// commit one after another in the order of their seqs: once a reader sees
// a message with seq n, every message of that agent with a smaller seq is
// already visible, and "resume after seq" never skips one. A database
// sequence would not do: two transactions can take 5 and 6 and commit 6
// first. The price is that posts to one agent's channels queue behind each
// other for the length of a short transaction; posts to different agents
// do not. On SQLite the single writer serializes all posts anyway.

const messageColumns = `id, seq, channel_id, agent_id, skill, type, in_reply_to, sender, body, tool, arguments, created_at`

// storedBody is what a message's body column holds: its body and, for a
// chat_message of a traced call, its trace context, which needs no column
// of its own (workers get it with the message; nothing queries it).
type storedBody struct {
	mcpgate.MessageBody
	Trace mcpgate.TraceContext `json:"_trace,omitzero"`
}

// DefaultListLimit is how many messages ListMessages returns when asked for
// a limit of zero or less.
const DefaultListLimit = 100

// PostMessage stores m, setting its ID when empty, its CreatedAt when zero,
// its AgentID and Skill from its channel, and its Seq. Posting a final
// reply or a cancel acknowledges the chat_message it answers, which is then
// not delivered again. Returns ENOTFOUND if the channel does not exist,
// ECONFLICT if the ID exists or if m is a final reply to a message that has
// one already, and EINVALID if the type is unknown, or if a reply, delta or
// cancel does not name a chat_message of the same channel in InReplyTo.
func (s *Store) PostMessage(ctx context.Context, m *mcpgate.Message) error {
	_, err := s.post(ctx, m, nil)
	return err
}

// PostDelivered stores m as PostMessage does and, when m is a message to
// the workers of to.AgentID (of skill to.Skill, or of any when it is "")
// and no older message of that inbox is claimable, marks it delivered at
// its CreatedAt, its first attempt, as if claimed in the same transaction;
// it reports whether it did. An inbox stream that waits on this replica
// then takes m without a claim of its own. An older claimable message
// leaves m to be claimed after it, so that a stream delivers in seq order.
func (s *Store) PostDelivered(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox) (bool, error) {
	return s.post(ctx, m, &to)
}

// post stores m, delivered to the inbox to when it is not nil and the
// conditions of PostDelivered hold, and reports whether it was.
func (s *Store) post(ctx context.Context, m *mcpgate.Message, to *mcpgate.Inbox) (delivered bool, err error) {
	body, err := prepareMessage(m)
	if err != nil {
		return false, err
	}
	if to == nil && postsInOneStatement(s.d) {
		return false, s.postInOneStatement(ctx, m, body)
	}
	err = s.withGroupTx(ctx, func(tx *Store) error {
		if err := tx.checkMessageTarget(ctx, m); err != nil {
			return err
		}
		if err := tx.nextSeq(ctx, m); err != nil {
			return err
		}
		if delivered, err = tx.insertMessage(ctx, m, body, to); err != nil {
			return err
		}
		if m.Type.Final() || m.Type == mcpgate.MessageCancel {
			return tx.ack(ctx, m.InReplyTo, m.CreatedAt)
		}
		return nil
	})
	return delivered && err == nil, err
}

// postOneQuery takes the agent's next seq, inserts the message with it
// and, for a final reply or a cancel, acknowledges the message it answers
// ($12), all in one statement. The acknowledgement waits for the seq (its
// EXISTS on s), so that it, like a claim, locks the agent's counter before
// a message's row.
const postOneQuery = `WITH s AS (INSERT INTO message_seqs (agent_id, seq) VALUES ($3, 1)
		ON CONFLICT (agent_id) DO UPDATE SET seq = message_seqs.seq + 1 RETURNING seq),
	a AS (UPDATE messages SET acked_at = COALESCE(acked_at, $11) WHERE $12 AND id = $6 AND EXISTS (SELECT 1 FROM s))
	INSERT INTO messages (` + messageColumns + `)
	SELECT $1, s.seq, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM s RETURNING seq`

// postInOneStatement stores m, not delivered, after checking its target:
// one read, then one write statement, with no transaction around them,
// so that the agent's seq lock is held only while the write runs (the
// check reads what a post cannot change: a channel's agent, and whether
// a message is a chat_message of it; the foreign key catches a channel
// deleted in between).
func (s *Store) postInOneStatement(ctx context.Context, m *mcpgate.Message, body []byte) error {
	if err := s.checkMessageTarget(ctx, m); err != nil {
		return err
	}
	ack := m.Type.Final() || m.Type == mcpgate.MessageCancel
	err := s.write.QueryRowContext(ctx, postOneQuery,
		m.ID, m.ChannelID, m.AgentID, m.Skill, string(m.Type), nullString(m.InReplyTo), m.Sender, string(body),
		nullString(m.Tool), nullString(string(m.Arguments)), micros(m.CreatedAt), ack).Scan(&m.Seq)
	if err != nil {
		return s.insertError(m, err)
	}
	return nil
}

// prepareMessage checks m's type and reply target, fills in its ID and
// time, and returns its body as stored.
func prepareMessage(m *mcpgate.Message) ([]byte, error) {
	switch m.Type {
	case mcpgate.MessageChat:
	case mcpgate.MessageReplyDelta, mcpgate.MessageReply, mcpgate.MessageError, mcpgate.MessageCancel:
		if m.InReplyTo == "" {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "a message of type %s needs in_reply_to", m.Type)
		}
	default:
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "unknown message type %q", m.Type)
	}
	body, err := json.Marshal(storedBody{m.Body, m.Trace})
	if err != nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "message body: %v", err)
	}
	if m.ID == "" {
		m.ID = mcpgate.NewID("msg_")
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now()
	}
	m.CreatedAt = normalize(m.CreatedAt)
	return body, nil
}

// checkMessageTarget sets m's agent and skill from its channel and checks
// that the message it replies to, if any, is a chat_message of the same
// channel. One query reads both.
func (s *Store) checkMessageTarget(ctx context.Context, m *mcpgate.Message) error {
	var typ sql.NullString
	err := s.write.QueryRowContext(ctx, `SELECT agent_id, skill,
		(SELECT type FROM messages WHERE id = $2 AND channel_id = $1) FROM channels WHERE id = $1`,
		m.ChannelID, m.InReplyTo).Scan(&m.AgentID, &m.Skill, &typ)
	if errors.Is(err, sql.ErrNoRows) {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "channel %q not found", m.ChannelID)
	} else if err != nil {
		return fmt.Errorf("post message: find channel %s: %w", m.ChannelID, err)
	}
	if m.InReplyTo != "" && typ.String != string(mcpgate.MessageChat) {
		return mcpgate.Errorf(mcpgate.EINVALID, "in_reply_to %q is not a chat_message of channel %q", m.InReplyTo, m.ChannelID)
	}
	return nil
}

// nextSeq gives m the next seq of its agent, locking the agent's counter
// until the transaction ends.
func (s *Store) nextSeq(ctx context.Context, m *mcpgate.Message) error {
	err := s.write.QueryRowContext(ctx, `INSERT INTO message_seqs (agent_id, seq) VALUES ($1, 1)
		ON CONFLICT (agent_id) DO UPDATE SET seq = message_seqs.seq + 1 RETURNING seq`, m.AgentID).Scan(&m.Seq)
	if err != nil {
		return fmt.Errorf("post message: next seq of agent %s: %w", m.AgentID, err)
	}
	return nil
}

// forInbox reports whether m is a message to the workers of the inbox to.
func forInbox(m *mcpgate.Message, to *mcpgate.Inbox) bool {
	return to != nil && m.Type.ToAgent() && m.AgentID == to.AgentID && (to.Skill == "" || m.Skill == to.Skill)
}

// insertMessage inserts m with its body as stored and, when it is a
// message to the workers of the inbox to, delivered at its CreatedAt if
// the inbox has no older claimable message; it reports whether it was.
// The check runs after the seq is taken: the seq lock keeps any older
// message from being posted meanwhile, and on PostgreSQL the statement
// sees every post committed before the lock was granted.
func (s *Store) insertMessage(ctx context.Context, m *mcpgate.Message, body []byte, to *mcpgate.Inbox) (delivered bool, err error) {
	args := []any{m.ID, m.Seq, m.ChannelID, m.AgentID, m.Skill, string(m.Type), nullString(m.InReplyTo), m.Sender, string(body),
		nullString(m.Tool), nullString(string(m.Arguments)), micros(m.CreatedAt)}
	if forInbox(m, to) {
		args = append(args, micros(m.CreatedAt.Add(-to.Visibility)), to.Skill)
		err = s.write.QueryRowContext(ctx, checkedInsertQuery, args...).Scan(&delivered)
	} else {
		_, err = s.write.ExecContext(ctx, `INSERT INTO messages (`+messageColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, args...)
	}
	if err != nil {
		return false, s.insertError(m, err)
	}
	return delivered, nil
}

// checkedInsertQuery inserts a message ($1 to $12 as messageColumns)
// delivered at its created_at, its first attempt, unless a message of the
// same inbox (of skill $14, or of all when it is empty) with a smaller seq is
// claimable (never delivered, or delivered at $13 or before), and returns
// whether it was delivered. The casts give PostgreSQL one type for each
// parameter used twice.
const checkedInsertQuery = `INSERT INTO messages (` + messageColumns + `, delivered_at, attempts)
	SELECT $1, CAST($2 AS BIGINT), $3, $4, $5, $6, $7, $8, $9, $10, $11, CAST($12 AS BIGINT),
		CASE WHEN c.free THEN CAST($12 AS BIGINT) END, CASE WHEN c.free THEN 1 ELSE 0 END
	FROM (SELECT NOT EXISTS (SELECT 1 FROM messages
		WHERE agent_id = $4 AND acked_at IS NULL AND type IN ('chat_message', 'cancel')
		AND (delivered_at IS NULL OR delivered_at <= $13) AND ($14 = '' OR skill = $14) AND seq < $2) AS free) AS c
	RETURNING delivered_at IS NOT NULL`

// insertError maps the error of inserting m to the store's errors.
func (s *Store) insertError(m *mcpgate.Message, err error) error {
	v := s.d.Violation(err)
	switch {
	case v.Kind == UniqueViolation && v.On("in_reply_to"):
		return mcpgate.Errorf(mcpgate.ECONFLICT, "message %q has a final reply already", m.InReplyTo)
	case v.Kind == UniqueViolation:
		return mcpgate.Errorf(mcpgate.ECONFLICT, "message %q exists", m.ID)
	}
	return fmt.Errorf("post message %s: %w", m.ID, err)
}

// ListMessages returns a channel's messages with Seq > afterSeq, oldest
// first, at most limit of them (DefaultListLimit when limit <= 0). An
// unknown channel has no messages.
func (s *Store) ListMessages(ctx context.Context, channelID string, afterSeq int64, limit int) ([]*mcpgate.Message, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	rows, err := s.read.QueryContext(detach(ctx), `SELECT `+messageColumns+` FROM messages
		WHERE channel_id = $1 AND seq > $2 ORDER BY seq`+limitClause(limit), channelID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("list messages of %s: %w", channelID, err)
	}
	return collect(rows, scanMessage)
}

// limitClause is " LIMIT n". The limit is written into the text, not bound:
// SQLite recompiles a statement whose LIMIT is a parameter on every run,
// since it plans by the value bound (10 µs of a 40 µs read of messages).
func limitClause(n int) string { return fmt.Sprintf(" LIMIT %d", n) }

// FindMessage returns the message with the given ID; ENOTFOUND if there is
// none.
func (s *Store) FindMessage(ctx context.Context, id string) (*mcpgate.Message, error) {
	m, err := scanMessage(s.read.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "message %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("find message %s: %w", id, err)
	}
	return m, nil
}

// FindReply returns the final reply to a message, found through the unique
// index on final replies; ENOTFOUND while there is none.
func (s *Store) FindReply(ctx context.Context, inReplyTo string) (*mcpgate.Message, error) {
	m, err := scanMessage(s.read.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE in_reply_to = $1 AND type IN ('agent_reply', 'agent_error')`, inReplyTo))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "message %q has no reply yet", inReplyTo)
	} else if err != nil {
		return nil, fmt.Errorf("find reply to %s: %w", inReplyTo, err)
	}
	return m, nil
}

func scanMessage(row scanner) (*mcpgate.Message, error) {
	var m mcpgate.Message
	var typ, body string
	var inReplyTo, tool, args sql.NullString
	var created int64
	err := row.Scan(&m.ID, &m.Seq, &m.ChannelID, &m.AgentID, &m.Skill, &typ, &inReplyTo, &m.Sender, &body, &tool, &args, &created)
	if err != nil {
		return nil, err
	}
	var sb storedBody
	if err := json.Unmarshal([]byte(body), &sb); err != nil {
		return nil, fmt.Errorf("message %s: body: %w", m.ID, err)
	}
	m.Body, m.Trace = sb.MessageBody, sb.Trace
	m.Type, m.InReplyTo, m.Tool, m.CreatedAt = mcpgate.MessageType(typ), inReplyTo.String, tool.String, fromMicros(created)
	if args.Valid {
		m.Arguments = json.RawMessage(args.String)
	}
	return &m, nil
}
