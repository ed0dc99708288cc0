package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/sqlite"
)

// counter reads the agent's seq counter row from the database at path.
func counter(t *testing.T, path, agentID string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var seq int64
	if err := db.QueryRow(`SELECT seq FROM message_seqs WHERE agent_id = ?`, agentID).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// post posts a chat_message on the channel and returns its seq.
func post(t *testing.T, s mcpgate.Store, channelID string) int64 {
	t.Helper()
	m := &mcpgate.Message{ChannelID: channelID, Type: mcpgate.MessageChat, Sender: "user:u1", Body: mcpgate.MessageBody{Text: "hi"}}
	if err := s.PostMessage(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m.Seq
}

// mustAgentChannel makes the user alice (once), the agent and a channel of
// it named after it.
func mustAgentChannel(t *testing.T, s mcpgate.Store, agentID string) {
	t.Helper()
	ctx := context.Background()
	u, err := s.FindUserByName(ctx, "alice")
	if mcpgate.ErrorCode(err) == mcpgate.ENOTFOUND {
		u = &mcpgate.User{Name: "alice", Source: mcpgate.SourceCLI}
		err = s.CreateUser(ctx, u)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, &mcpgate.Agent{ID: agentID, Name: agentID, OwnerID: u.ID, Source: mcpgate.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-" + agentID, AgentID: agentID, Skill: "chat", Owner: "user:" + u.ID}); err != nil {
		t.Fatal(err)
	}
}

// TestSeqBlocks: posts take their seqs from a block reserved on the
// agent's counter row at once, not from the row one by one, and a store
// opened again starts above the block, so seqs keep increasing.
func TestSeqBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgate.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	mustAgentChannel(t, s, "weather")
	var seqs []int64
	for range 3 {
		seqs = append(seqs, post(t, s, "ch-weather"))
	}
	reserved := counter(t, path, "weather")
	if reserved < seqs[2]+100 {
		t.Errorf("counter %d after seqs %v: want a block reserved ahead", reserved, seqs)
	}
	seqs = append(seqs, post(t, s, "ch-weather"))
	if got := counter(t, path, "weather"); got != reserved {
		t.Errorf("counter %d after one more post, want %d: the post took it from the block", got, reserved)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, path)
	seqs = append(seqs, post(t, s, "ch-weather"))
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("seqs %v: want increasing", seqs)
		}
	}
	if seqs[4] <= reserved {
		t.Errorf("seq %d after reopening, want above the block that ended at %d", seqs[4], reserved)
	}
}

// TestSeqsAfterAgentMadeAgain: an agent deleted and made again under the
// same ID goes on from the seqs of its first life.
func TestSeqsAfterAgentMadeAgain(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	mustAgentChannel(t, s, "weather")
	before := post(t, s, "ch-weather")
	if err := s.DeleteAgent(context.Background(), "weather"); err != nil {
		t.Fatal(err)
	}
	mustAgentChannel(t, s, "weather")
	if after := post(t, s, "ch-weather"); after <= before {
		t.Errorf("seq %d after the agent was made again, want above %d", after, before)
	}
}
