package postgres_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// The statements of an agent's round trip (post, claim, renew, reply,
// release, acknowledgement, the reads of a channel) reach the rows they
// need through an index that leads to them, even under a generic plan
// made while the messages table was empty, which is what pgx's cached
// statements get on a new database. Before, such plans had the claim's
// update join its picks by a scan of the whole table; renewals, releases
// and acknowledgements scan all of the agent's messages
// (messages_agent_id_seq_key); and the reply's check of in_reply_to read
// its whole channel (messages_channel_seq).
func TestRoundTripPlansReadNoRange(t *testing.T) {
	dsn := pgtest.Database(t, pgtest.Admin(t))
	s, log := openTraced(t, dsn, func(q string) bool { return strings.Contains(q, "messages") })
	log.during("round trip")
	roundTrip(t, s)
	log.during("")
	traced := log.statements()
	if len(traced) < 6 {
		t.Fatalf("%d statements on messages traced, want the round trip's 6 or more", len(traced))
	}
	for q, st := range traced {
		if bad := rangeRead(q, genericPlan(t, dsn, q, st.args)); bad != "" {
			t.Errorf("the generic plan of\n%s\n%s", q, bad)
		}
	}
}

// statementLog records the statements a traced store sends while an
// operation runs (see during) and keep accepts, with the operation's name
// and their last arguments.
type statementLog struct {
	keep func(q string) bool
	mu   sync.Mutex
	op   string // the operation running; "" records nothing
	seen map[string]tracedStatement
}

// tracedStatement is a statement's operation and its last arguments.
type tracedStatement struct {
	op   string
	args []any
}

// openTraced opens a store on dsn (its migrations run unrecorded) and
// returns it with the log of the statements keep accepts.
func openTraced(t *testing.T, dsn string, keep func(q string) bool) (*sqlstore.Store, *statementLog) {
	l := &statementLog{keep: keep, seen: map[string]tracedStatement{}}
	s, err := postgres.OpenTraced(context.Background(), dsn, l.trace)
	mustDo(t, err)
	t.Cleanup(func() { mustDo(t, s.Close()) })
	return s, l
}

// trace records q with args, when an operation runs and keep accepts it.
func (l *statementLog) trace(q string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.op != "" && l.keep(q) {
		l.seen[q] = tracedStatement{op: l.op, args: statementArgs(args)}
	}
}

// during names the operation that runs from now on; "" ends recording.
func (l *statementLog) during(op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.op = op
}

// statements returns the statements recorded so far.
func (l *statementLog) statements() map[string]tracedStatement {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.seen)
}

// rangeRead says how plan, q's, reads more rows than q needs, or "".
func rangeRead(q, plan string) string {
	switch {
	case strings.Contains(plan, "Seq Scan on message"):
		return "reads a whole table:\n" + plan
	case strings.Contains(plan, "messages_agent_id_seq_key"):
		return "scans all of the agent's messages:\n" + plan
	case strings.Contains(q, "FROM messages r") && (strings.Contains(plan, "messages_channel_seq") || !strings.Contains(plan, "messages_pkey")):
		return "finds in_reply_to other than by its key:\n" + plan
	}
	return ""
}

// roundTrip runs an agent's round trip on s: two chat_messages posted and
// claimed, one renewed and answered with a delta and a reply, the other
// released, claimed again and acknowledged, and the channel and the reply
// read.
func roundTrip(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := &mcpgate.User{Name: "alice", PasswordHash: "x", Source: mcpgate.SourceCLI}
	mustDo(t, s.CreateUser(ctx, u))
	mustDo(t, s.CreateAgent(ctx, &mcpgate.Agent{ID: "weather", Name: "Weather", OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	mustDo(t, s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-1", AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID}))
	chat := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:" + u.ID}
	other := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:" + u.ID}
	mustDo(t, s.PostMessage(ctx, chat))
	mustDo(t, s.PostMessage(ctx, other))
	now := time.Now().Truncate(time.Microsecond)
	claimed, err := s.ClaimMessages(ctx, "weather", "", now, time.Minute, 10)
	mustDo(t, err)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d messages, want 2", len(claimed))
	}
	renewed, err := s.RenewMessages(ctx, "weather", map[string]time.Time{chat.ID: now}, now.Add(time.Second))
	mustDo(t, err)
	if len(renewed) != 1 || renewed[0] != chat.ID {
		t.Fatalf("renewed %v, want %s", renewed, chat.ID)
	}
	reply := func(typ mcpgate.MessageType) *mcpgate.Message {
		return &mcpgate.Message{ChannelID: "ch-1", AgentID: "weather", Type: typ, InReplyTo: chat.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "sunny"}}
	}
	mustDo(t, s.PostMessage(ctx, reply(mcpgate.MessageReplyDelta)))
	mustDo(t, s.PostMessage(ctx, reply(mcpgate.MessageReply)))
	mustDo(t, s.ReleaseMessages(ctx, "weather", map[string]time.Time{other.ID: now}))
	again, err := s.ClaimMessages(ctx, "weather", "", now.Add(2*time.Second), time.Minute, 10)
	mustDo(t, err)
	if len(again) != 1 || again[0].ID != other.ID {
		t.Fatalf("claimed %v after the release, want %s", again, other.ID)
	}
	mustDo(t, s.AckMessage(ctx, "weather", other.ID))
	_, err = s.ListMessages(ctx, "ch-1", 0, 10)
	mustDo(t, err)
	_, err = s.FindReply(ctx, chat.ID)
	mustDo(t, err)
}

// genericPlan returns PostgreSQL's generic plan of q run with args, as
// EXPLAIN prints it: the plan made without the arguments' values, which a
// cached statement runs with once its first few runs found it no costlier.
func genericPlan(t *testing.T, dsn, q string, args []any) string {
	t.Helper()
	return explain(t, dsn, "force_generic_plan", q, args)
}

// explain returns PostgreSQL's plan of q run with args under mode, a
// plan_cache_mode, as EXPLAIN prints it.
func explain(t *testing.T, dsn, mode, q string, args []any) string {
	t.Helper()
	ctx := context.Background()
	db := pgtest.Open(t, dsn)
	defer db.Close() // one connection a statement checked, not one a test
	conn, err := db.Conn(ctx)
	mustDo(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET plan_cache_mode = "+mode)
	mustDo(t, err)
	_, err = conn.ExecContext(ctx, "PREPARE checked AS "+q)
	mustDo(t, err)
	execute := "EXPLAIN EXECUTE checked"
	if len(args) > 0 {
		lits := make([]string, len(args))
		for i, a := range args {
			lits[i] = literal(t, a)
		}
		execute += "(" + strings.Join(lits, ", ") + ")"
	}
	rows, err := conn.QueryContext(ctx, execute)
	mustDo(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		mustDo(t, rows.Scan(&line))
		lines = append(lines, line)
	}
	mustDo(t, rows.Err())
	return strings.Join(lines, "\n")
}

// statementArgs returns the arguments of a traced query without the
// options database/sql's pgx adapter passes among them.
func statementArgs(args []any) []any {
	var out []any
	for _, a := range args {
		switch a.(type) {
		case pgx.QueryResultFormatsByOID, pgx.QueryResultFormats, pgx.QueryExecMode:
		default:
			out = append(out, a)
		}
	}
	return out
}

// literal writes a statement's argument as an SQL literal.
func literal(t *testing.T, a any) string {
	switch v := a.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return literal(t, string(v))
	case driver.Valuer:
		dv, err := v.Value()
		mustDo(t, err)
		return literal(t, dv)
	case int, int32, int64, bool:
		return fmt.Sprint(v)
	}
	t.Fatalf("no literal for argument %#v", a)
	return ""
}
