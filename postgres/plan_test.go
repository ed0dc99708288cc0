package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/postgres"
	"github.com/mcpgate/mcpgate/postgres/pgtest"
)

// The statements that check a reply's in_reply_to (a chat_message of the
// reply's channel) find that message by its primary key, even under a
// generic plan made while the table was empty, as pgx's cached statements
// get: an EXISTS naming the channel too was planned on
// messages_channel_seq there, and every reply then read its whole channel.
func TestInReplyToFoundByPrimaryKey(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t, pgtest.Admin(t))
	var mu sync.Mutex
	checks := map[string][]any{} // statements reading messages r, with their arguments
	s, err := postgres.OpenTraced(ctx, dsn, func(q string, args []any) {
		if strings.Contains(q, "FROM messages r") {
			mu.Lock()
			checks[q] = statementArgs(args)
			mu.Unlock()
		}
	})
	mustDo(t, err)
	t.Cleanup(func() { mustDo(t, s.Close()) })
	u := &mcpgate.User{Name: "alice", PasswordHash: "x", Source: mcpgate.SourceCLI}
	mustDo(t, s.CreateUser(ctx, u))
	mustDo(t, s.CreateAgent(ctx, &mcpgate.Agent{ID: "weather", Name: "Weather", OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	mustDo(t, s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-1", AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID}))
	chat := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:" + u.ID}
	mustDo(t, s.PostMessage(ctx, chat))
	mustDo(t, s.PostMessage(ctx, &mcpgate.Message{ChannelID: "ch-1", AgentID: "weather", Type: mcpgate.MessageReply, InReplyTo: chat.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "sunny"}}))
	if len(checks) == 0 {
		t.Fatal("no statement checked the reply's in_reply_to")
	}
	for q, args := range checks {
		if plan := genericPlan(t, dsn, q, args); strings.Contains(plan, "messages_channel_seq") || !strings.Contains(plan, "messages_pkey") {
			t.Errorf("the generic plan of\n%s\nreads messages r by:\n%s", q, plan)
		}
	}
}

// genericPlan returns PostgreSQL's generic plan of q run with args, as
// EXPLAIN prints it.
func genericPlan(t *testing.T, dsn, q string, args []any) string {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(dsn)
	mustDo(t, err)
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	conn, err := db.Conn(ctx)
	mustDo(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan")
	mustDo(t, err)
	_, err = conn.ExecContext(ctx, "PREPARE checked AS "+q)
	mustDo(t, err)
	lits := make([]string, len(args))
	for i, a := range args {
		lits[i] = literal(t, a)
	}
	rows, err := conn.QueryContext(ctx, "EXPLAIN EXECUTE checked("+strings.Join(lits, ", ")+")")
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
	case sql.NullString:
		if !v.Valid {
			return "NULL"
		}
		return literal(t, v.String)
	case int, int64, bool:
		return fmt.Sprint(v)
	}
	t.Fatalf("no literal for argument %#v", a)
	return ""
}
