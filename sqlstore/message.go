package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

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
// do not. On SQLite the single writer serializes all posts anyway, and the
// process that holds it takes seqs from blocks it reserved on the row
// (seqblock.go) instead of writing the row for each post.

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
// its AgentID and Skill from its channel, and its Seq. An AgentID set by
// the caller names the agent the channel must be of; the check is part of
// the statement that inserts m, so a caller that knows the agent saves a
// read. Posting a final reply or a cancel acknowledges the chat_message it
// answers, which is then not delivered again. Returns ENOTFOUND if the
// channel does not exist or is another agent's, ECONFLICT if the ID exists
// or if m is a final reply to a message that has one already, and EINVALID
// if the type is unknown, or if a reply, delta or cancel does not name a
// chat_message of the same channel in InReplyTo.
func (s *Store) PostMessage(ctx context.Context, m *mcpgate.Message) error {
	_, err := s.post(ctx, m, postArgs{})
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
	return s.post(ctx, m, postArgs{to: &to})
}

// PostHanded posts m as PostDelivered does, for a caller that hands m over
// in process when it was delivered: on an engine that commits posts
// together (SQLite) it may return before the transaction holding m
// commits, which it then does within a few milliseconds, or with the next
// post that waits for its commit (see open.go). Until then only the
// writer's transaction sees m; a read of messages, or any other write,
// commits it first. If that commit fails, m is not stored and lost is
// called with the error, once, from the goroutine that committed. On
// other engines PostHanded is PostDelivered.
func (s *Store) PostHanded(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, lost func(error)) (bool, error) {
	return s.post(ctx, m, postArgs{to: &to, lost: lost})
}

// PostHandedFirst posts m, a chat_message with a new ID, as PostHanded
// does, for a caller that may hand m over before it is stored: on an
// engine with one writer (SQLite), when the Store knows without reading
// the database that m's channel is m.AgentID's, of skill m.Skill, and that
// no message of the inbox is claimable (inboxstate.go), it calls hand
// once m has its seq and before m's statements run, and m is delivered;
// it then returns true with the statements' error, if any, and a commit
// that fails afterwards is told to lost. Otherwise it does not call hand,
// and returns as PostHanded does. m's ID must be new: a post handed over
// first is not checked for a duplicate before it is handed.
func (s *Store) PostHandedFirst(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, hand func(), lost func(error)) (bool, error) {
	return s.post(ctx, m, postArgs{to: &to, lost: lost, hand: hand})
}

// PostReplyHanded stores m, a final reply, as PostMessage does, for a
// caller that hands m over in process to the call waiting for it: on an
// engine that commits posts together (SQLite) it calls hand as soon as m
// ran in the writer's transaction, before that transaction commits, and
// returns once it committed, so that the call can answer while the commit
// runs. If that commit fails, m is not stored (nor the messages committed
// with it) and the commit's error is returned, though hand was called. On
// other engines hand is called once m is committed. An error before m was
// stored returns without calling hand.
func (s *Store) PostReplyHanded(ctx context.Context, m *mcpgate.Message, hand func()) error {
	var lost atomic.Pointer[error]
	if _, err := s.post(ctx, m, postArgs{lost: func(err error) { lost.Store(&err) }}); err != nil {
		return err
	}
	hand()
	return s.waitCommitted(ctx, &lost)
}

// PostClaimedReply stores m, a final reply its caller vouches for and has
// handed over already: m answers, on m.ChannelID and from m.AgentID, a
// chat_message the caller posted there, whose statements ran, and
// m.Skill is that channel's skill (the bus's claim, which has them in
// memory), and the call waiting for m has it. On an engine with one
// writer (SQLite) the store then skips its check of the channel and of
// the message answered, a query each reply, and returns as soon as m ran
// in the writer's transaction, as PostHanded does: that transaction
// commits within a few milliseconds, or with the next post that waits
// for its commit or the next read of messages; if that commit fails, m
// is not stored and lost is called with the error, once. A channel
// deleted meanwhile still fails the insert (ENOTFOUND), and a second
// final reply is still ECONFLICT. Other engines check m as PostMessage
// does and return once it is committed.
func (s *Store) PostClaimedReply(ctx context.Context, m *mcpgate.Message, lost func(error)) error {
	_, err := s.post(ctx, m, postArgs{lost: lost, vouched: m.Skill != "" && m.AgentID != ""})
	return err
}

// waitCommitted returns once every post that returned before its commit
// is committed, with the commit's error, or the error lost holds: a post
// that returned early was lost in a commit that ran already.
func (s *Store) waitCommitted(ctx context.Context, lost *atomic.Pointer[error]) error {
	if s.group != nil && !s.inTx {
		if err := s.runGroup(ctx, &groupOp{}); err != nil {
			return err
		}
	}
	if err := lost.Load(); err != nil {
		return *err
	}
	return nil
}

// postArgs say how a post stores its message.
type postArgs struct {
	// to, when not nil, is the inbox the message is delivered to when the
	// conditions of PostDelivered hold.
	to *mcpgate.Inbox
	// lost, when set, lets the post return before its commit, and is told
	// if that commit fails (PostHanded).
	lost func(error)
	// vouched skips the check of a reply's target where an engine can
	// (PostClaimedReply).
	vouched bool
	// hand, when set, is called before the message's statements run when
	// the Store knows it may be delivered to the inbox to
	// (PostHandedFirst).
	hand func()
}

// post stores m as a says, and reports whether it was delivered.
func (s *Store) post(ctx context.Context, m *mcpgate.Message, a postArgs) (delivered bool, err error) {
	body, err := prepareMessage(m)
	if err != nil {
		return false, err
	}
	if a.to == nil && postsInOneStatement(s.d) {
		return false, s.postInOneStatement(ctx, m, body)
	}
	if m.AgentID == "" {
		if err := s.channelAgent(ctx, m); err != nil {
			return false, err
		}
	}
	handed := false
	if hand := a.hand; hand != nil {
		a.hand = func() {
			// Before m leaves: whoever it reaches reads after its
			// statements and commit, not before (settle).
			s.unsettled.Store(true)
			handed = true
			hand()
		}
	}
	fn := func(ctx context.Context, tx *Store) error {
		var err error
		delivered, err = tx.postIn(ctx, m, body, a)
		return err
	}
	err = s.runPost(ctx, &groupOp{agentID: m.AgentID, fn: fn, lost: a.lost})
	return handed || delivered && err == nil, err
}

// postIn stores m in the transaction s: it takes the seq, inserts m when
// its channel is its agent's and its reply target a chat_message of the
// channel (vouched, as post says), and acknowledges the message a final
// reply or a cancel answers.
func (s *Store) postIn(ctx context.Context, m *mcpgate.Message, body []byte, a postArgs) (bool, error) {
	if err := s.takeSeq(ctx, m); err != nil {
		if s.d.Violation(err).Kind == ForeignKeyViolation {
			return false, channelNotFound(m) // no such agent, so none of its channels
		}
		return false, err
	}
	ok, delivered, err := s.insertMessage(ctx, m, body, a)
	if err != nil {
		return false, err
	} else if !ok {
		return false, s.targetError(ctx, m)
	}
	if m.Type.Final() || m.Type == mcpgate.MessageCancel {
		return delivered, s.ack(ctx, m.AgentID, m.InReplyTo, m.CreatedAt)
	}
	return delivered, nil
}

// The queries below check that a message's in_reply_to is a chat_message
// of its channel with a subquery that finds that message by its primary
// key alone and answers true, false, or NULL when there is none (which a
// WHERE takes as false). As an EXISTS whose WHERE also named the channel,
// PostgreSQL could plan it on messages_channel_seq, and a generic plan
// made while the table was small kept that index: every reply then read
// its whole channel (575 buffers a post in an 8 × 1,500 load).

// postOneQuery checks a message's target as insertQuery does (channel $2,
// of agent $3 unless it is empty; in_reply_to $5), takes the agent's next
// seq, inserts the message with it and, for a final reply or a cancel,
// acknowledges the message it answers ($11), all in one statement, and
// returns the seq, the agent and the skill; no row when the target is
// wrong. The acknowledgement waits for the seq (its EXISTS on s), so that
// it, like a claim, locks the agent's counter before a message's row.
const postOneQuery = `WITH t AS (SELECT c.agent_id, c.skill FROM channels c
		WHERE c.id = $2 AND ($3 = '' OR c.agent_id = $3) AND (CAST($5 AS TEXT) IS NULL
		OR (SELECT r.channel_id = $2 AND r.type = 'chat_message' FROM messages r WHERE r.id = $5))),
	s AS (INSERT INTO message_seqs (agent_id, seq) SELECT agent_id, 1 FROM t
		ON CONFLICT (agent_id) DO UPDATE SET seq = message_seqs.seq + 1 RETURNING seq),
	a AS (UPDATE messages SET acked_at = COALESCE(acked_at, $10) WHERE $11 AND id = $5 AND EXISTS (SELECT 1 FROM s))
	INSERT INTO messages (` + messageColumns + `)
	SELECT $1, s.seq, $2, t.agent_id, t.skill, $4, $5, $6, $7, $8, $9, $10 FROM s, t RETURNING seq, agent_id, skill`

// postInOneStatement stores m, not delivered, in one statement with no
// transaction around it, so that the agent's seq lock is held only while
// it runs. The statement checks m's target itself; when it inserts
// nothing, a read says why.
func (s *Store) postInOneStatement(ctx context.Context, m *mcpgate.Message, body []byte) error {
	ack := m.Type.Final() || m.Type == mcpgate.MessageCancel
	err := s.write.QueryRowContext(ctx, postOneQuery,
		m.ID, m.ChannelID, m.AgentID, string(m.Type), nullString(m.InReplyTo), m.Sender, string(body),
		nullString(m.Tool), nullString(string(m.Arguments)), micros(m.CreatedAt), ack).Scan(&m.Seq, &m.AgentID, &m.Skill)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return s.targetError(ctx, m)
	case s.d.Violation(err).Kind == ForeignKeyViolation:
		return channelNotFound(m) // deleted with its agent meanwhile
	case err != nil:
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
	m.Stamp()
	return body, nil
}

// channelAgent sets m's agent from its channel, whose agent never changes.
func (s *Store) channelAgent(ctx context.Context, m *mcpgate.Message) error {
	err := s.read.QueryRowContext(detach(ctx), `SELECT agent_id FROM channels WHERE id = $1`, m.ChannelID).Scan(&m.AgentID)
	if errors.Is(err, sql.ErrNoRows) {
		return channelNotFound(m)
	} else if err != nil {
		return fmt.Errorf("post message: find channel %s: %w", m.ChannelID, err)
	}
	return nil
}

// channelNotFound is the error of a post to a channel that does not exist
// or is not of the agent the post names.
func channelNotFound(m *mcpgate.Message) error {
	return mcpgate.Errorf(mcpgate.ENOTFOUND, "channel %q not found", m.ChannelID)
}

// targetError says why m was not inserted: its channel does not exist or
// is not its agent's, or the message it replies to is not a chat_message
// of the channel.
func (s *Store) targetError(ctx context.Context, m *mcpgate.Message) error {
	var agentID string
	var typ sql.NullString
	err := s.write.QueryRowContext(ctx, `SELECT agent_id,
		(SELECT type FROM messages WHERE id = $2 AND channel_id = $1) FROM channels WHERE id = $1`,
		m.ChannelID, m.InReplyTo).Scan(&agentID, &typ)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && m.AgentID != "" && agentID != m.AgentID:
		return channelNotFound(m)
	case err != nil:
		return fmt.Errorf("post message: find channel %s: %w", m.ChannelID, err)
	case m.InReplyTo != "" && typ.String != string(mcpgate.MessageChat):
		return mcpgate.Errorf(mcpgate.EINVALID, "in_reply_to %q is not a chat_message of channel %q", m.InReplyTo, m.ChannelID)
	}
	return fmt.Errorf("post message %s: not inserted", m.ID)
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

// forInbox reports whether m is a message to the workers of the agent of
// the inbox to (the store checks the skill).
func forInbox(m *mcpgate.Message, to *mcpgate.Inbox) bool {
	return to != nil && m.Type.ToAgent() && m.AgentID == to.AgentID
}

// insertMessage inserts m with its body as stored, taking its skill from
// its channel, when the channel is m's agent's and the message m replies
// to, if any, is a chat_message of it; it reports whether it did. When m
// is a message to the workers of the inbox to, it is inserted delivered at
// its CreatedAt if the inbox has no older claimable message, and
// insertMessage reports whether it was. The check runs after the seq is
// taken: the seq lock (or, on SQLite, the one writer) keeps any older
// message from being posted meanwhile, and on PostgreSQL the statement
// sees every post committed before the lock was granted.
func (s *Store) insertMessage(ctx context.Context, m *mcpgate.Message, body []byte, a postArgs) (ok, delivered bool, err error) {
	if groupsCommits(s.d) {
		return s.checkThenInsert(ctx, m, body, a)
	}
	to := a.to
	args := []any{m.ID, m.Seq, m.ChannelID, m.AgentID, string(m.Type), nullString(m.InReplyTo), m.Sender, string(body),
		nullString(m.Tool), nullString(string(m.Arguments)), micros(m.CreatedAt)}
	q := insertQuery
	if forInbox(m, to) {
		q, args = checkedInsertQuery, append(args, micros(m.CreatedAt.Add(-to.Visibility)), to.Skill)
	}
	err = s.write.QueryRowContext(ctx, q, args...).Scan(&m.Skill, &delivered)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	} else if err != nil {
		return false, false, s.insertError(m, err)
	}
	return true, delivered, nil
}

// On an engine with one writer (SQLite) a message is checked, then
// inserted, in two statements, since no one writes between them. There an
// INSERT whose SELECT reads the table it inserts into, or that returns
// rows, has SQLite build an ephemeral table for each (the rows to insert,
// the rows to return). Measured in loops of 5,000 deltas to one message,
// on one connection: 38–50 µs a post for the two statements against
// 45–76 µs for the one.

// checkedChannel is the channel row c of the check queries: channel $2
// when it is of agent $3 and $1, when not NULL, is a chat_message of it.
const checkedChannel = ` FROM channels c WHERE c.id = $2 AND c.agent_id = $3
	AND ($1 IS NULL OR (SELECT r.channel_id = $2 AND r.type = 'chat_message' FROM messages r WHERE r.id = $1))`

// checkQuery returns the skill of the checked channel.
const checkQuery = `SELECT c.skill` + checkedChannel

// olderClaimable returns a condition that holds when a message of the
// agent's inbox (of the skill, or of all when it is empty) with a seq below
// seq is claimable: never delivered, or delivered at or before the time
// at; each argument is a parameter of the query. On SQLite its two
// halves each search messages_claimable, the first by the NULL delivery
// time and the seq, the second by the delivery time: one condition of both
// (delivered_at IS NULL OR delivered_at <= at) would walk the whole inbox
// instead, and an inbox holds every call in flight. (PostgreSQL, which
// has no messages_claimable, runs this check only for PostDelivered,
// which its gateway does not use.)
func olderClaimable(agent, seq, at, skill string) string {
	inbox := `SELECT 1 FROM messages WHERE ` + inboxOf(agent, skill) + ` AND seq < ` + seq
	return `(EXISTS (` + inbox + ` AND delivered_at IS NULL) OR EXISTS (` + inbox + ` AND delivered_at <= ` + at + `))`
}

// checkInboxQuery is checkQuery that also says whether the message, of
// seq $4, is free to deliver: no message of the agent's inbox (of skill $6,
// or of all when it is empty) with a smaller seq is claimable (never
// delivered, or delivered at $5 or before).
var checkInboxQuery = `SELECT c.skill, NOT ` + olderClaimable("$3", "$4", "$5", "$6") + checkedChannel

// valuesInsertQuery inserts a message checked already. It runs on SQLite
// alone, so its parameters are anonymous: modernc's driver reads a named
// parameter's name into a new string at every bind.
const valuesInsertQuery = `INSERT INTO messages (` + messageColumns + `, delivered_at, attempts)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// checkThenInsert is insertMessage on an engine with one writer: it
// checks m's channel and reply target, and whether m is free to deliver to
// the inbox a.to, then inserts m. A vouched m (a reply, never for an inbox)
// is inserted unchecked, with its own skill: its channel's existence is
// the foreign key's to check. A chat_message the Store knows to be free to
// deliver is handed over first (handFirst), then inserted unchecked.
func (s *Store) checkThenInsert(ctx context.Context, m *mcpgate.Message, body []byte, a postArgs) (ok, delivered bool, err error) {
	switch {
	case a.vouched:
		return s.insertChecked(ctx, m, body, m.Skill, false)
	case s.handFirst(m, a):
		a.hand()
		return s.insertChecked(ctx, m, body, m.Skill, true)
	}
	skill, free, err := s.check(ctx, m, a.to)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	} else if err != nil {
		return false, false, fmt.Errorf("post message %s: check its channel: %w", m.ID, err)
	}
	delivered = free && (a.to.Skill == "" || skill == a.to.Skill)
	return s.insertChecked(ctx, m, body, skill, delivered)
}

// check reads m's channel's skill, when the channel is m's agent's and
// the message m replies to, if any, a chat_message of it, and, when m is
// a message to the workers of the inbox to, whether no older message of
// the inbox is claimable (free). What it reads, the Store's inbox state
// learns.
func (s *Store) check(ctx context.Context, m *mcpgate.Message, to *mcpgate.Inbox) (skill string, free bool, err error) {
	if !forInbox(m, to) {
		err = s.write.QueryRowContext(ctx, checkQuery, textOrNull(m.InReplyTo), m.ChannelID, m.AgentID).Scan(&skill)
		return skill, false, err
	}
	gen := s.inbox.generation()
	at := micros(m.CreatedAt.Add(-to.Visibility))
	err = s.write.QueryRowContext(ctx, checkInboxQuery, textOrNull(m.InReplyTo), m.ChannelID, m.AgentID,
		m.Seq, at, to.Skill).Scan(&skill, &free)
	if err == nil {
		s.inbox.learnChannel(m.ChannelID, m.AgentID, skill)
		if free && to.Skill == "" {
			s.inbox.checked(m.AgentID, gen, at)
		}
	}
	return skill, free, err
}

// handFirst reports whether m, posted with a, may be handed over before
// its statements run: it is a new chat_message for the inbox a.to, which
// the Store knows free (inboxstate.go), on a channel it knows to be m's
// agent's, of m's skill, and the caller would hand it first.
func (s *Store) handFirst(m *mcpgate.Message, a postArgs) bool {
	return a.hand != nil && forInbox(m, a.to) && m.Type == mcpgate.MessageChat && m.InReplyTo == "" &&
		(a.to.Skill == "" || a.to.Skill == m.Skill) && s.inbox.channel(m.ChannelID, m.AgentID, m.Skill) &&
		s.inbox.free(m.AgentID, micros(m.CreatedAt.Add(-a.to.Visibility)))
}

// insertChecked inserts m, checked already, with its channel's skill,
// delivered at its CreatedAt when delivered is set, and tells the Store's
// inbox state what that changes.
func (s *Store) insertChecked(ctx context.Context, m *mcpgate.Message, body []byte, skill string, delivered bool) (bool, bool, error) {
	var deliveredAt any
	attempts := 0
	if delivered {
		deliveredAt, attempts = micros(m.CreatedAt), 1
	}
	_, err := s.write.ExecContext(ctx, valuesInsertQuery, m.ID, m.Seq, m.ChannelID, m.AgentID, skill, string(m.Type),
		textOrNull(m.InReplyTo), m.Sender, string(body), textOrNull(m.Tool), textOrNull(string(m.Arguments)),
		micros(m.CreatedAt), deliveredAt, attempts)
	if s.d.Violation(err).Kind == ForeignKeyViolation {
		return false, false, channelNotFound(m) // deleted with its agent meanwhile
	} else if err != nil {
		return false, false, s.insertError(m, err)
	}
	if m.Skill != skill {
		m.Skill = skill // not written when equal: m may be in a stream's hands (handFirst)
	}
	s.noteInserted(m, delivered)
	return true, delivered, nil
}

// noteInserted tells the Store's inbox state that m was inserted,
// delivered or not.
func (s *Store) noteInserted(m *mcpgate.Message, delivered bool) {
	switch {
	case !m.Type.ToAgent():
	case delivered:
		s.inbox.delivered(m.AgentID, m.ID, micros(m.CreatedAt))
	default:
		s.inbox.unfree(m.AgentID)
	}
}

// targetedValues are the columns of a message (messageColumns) inserted
// from the channel c: id $1, seq $2, type $5, in_reply_to $6, sender $7,
// body $8, tool $9, arguments $10 and created_at $11, with the channel's
// ID, agent and skill. targetedWhere holds when c is channel $3, of agent
// $4, and in_reply_to, when set, is a chat_message of it. The casts give
// PostgreSQL one type for each parameter used twice.
const (
	targetedValues = `$1, CAST($2 AS BIGINT), c.id, c.agent_id, c.skill, $5, CAST($6 AS TEXT), $7, $8, $9, $10, CAST($11 AS BIGINT)`
	targetedWhere  = `c.id = $3 AND c.agent_id = $4 AND (CAST($6 AS TEXT) IS NULL
		OR (SELECT r.channel_id = $3 AND r.type = 'chat_message' FROM messages r WHERE r.id = $6))`
)

// insertQuery inserts a message from its channel, returning its skill and
// whether it was delivered (never).
const insertQuery = `INSERT INTO messages (` + messageColumns + `)
	SELECT ` + targetedValues + ` FROM channels c WHERE ` + targetedWhere + `
	RETURNING skill, delivered_at IS NOT NULL`

// checkedInsertQuery is insertQuery for a message to the workers of an
// inbox (of skill $13, or of all when it is empty): it is inserted
// delivered at its created_at, its first attempt, when it is of the
// inbox's skill and no message of the same inbox with a smaller seq is
// claimable (never delivered, or delivered at $12 or before).
var checkedInsertQuery = `INSERT INTO messages (` + messageColumns + `, delivered_at, attempts)
	SELECT ` + targetedValues + `,
		CASE WHEN f.free AND (CAST($13 AS TEXT) = '' OR c.skill = $13) THEN CAST($11 AS BIGINT) END,
		CASE WHEN f.free AND (CAST($13 AS TEXT) = '' OR c.skill = $13) THEN 1 ELSE 0 END
	FROM channels c, (SELECT NOT ` + olderClaimable("$4", "$2", "$12", "$13") + ` AS free) AS f
	WHERE ` + targetedWhere + `
	RETURNING skill, delivered_at IS NOT NULL`

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
	s.settle()
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
	s.settle()
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
	s.settle()
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
