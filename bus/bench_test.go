package bus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/bus"
)

// BenchmarkPostAwait measures a round trip through the bus and the store:
// post a chat_message, an agent goroutine woken by its inbox claims it and
// posts the reply, and Await returns it. On PostgreSQL it runs with the
// agent on the caller's replica and on another one.
func BenchmarkPostAwait(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		s := mustSQLite(b)
		r := mustBus(b, s, nil)
		benchPostAwait(b, r, r, s)
	})
	b.Run("postgres", func(b *testing.B) {
		_, _, rs := mustReplicas(b, 1)
		benchPostAwait(b, rs[0].bus, rs[0].bus, rs[0].store)
	})
	b.Run("postgres-2-replicas", func(b *testing.B) {
		_, _, rs := mustReplicas(b, 2)
		benchPostAwait(b, rs[0].bus, rs[1].bus, rs[1].store)
	})
}

// benchPostAwait runs the round trips from caller to an agent on agent
// and its store, one at a time and then GOMAXPROCS at once.
func benchPostAwait(b *testing.B, caller, agent *bus.Bus, agentStore bus.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go runAgent(ctx, agent, agentStore)
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if err := roundTrip(caller); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := roundTrip(caller); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("ask", func(b *testing.B) { // as the agent backend waits: a reply posted on the caller's replica may be handed over
		for b.Loop() {
			if err := askRoundTrip(caller); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// askRoundTrip posts a chat message and waits for its reply with Ask.
func askRoundTrip(caller *bus.Bus) error {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	chat := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u1", Body: mcpgate.MessageBody{Text: "ping"}}
	_, err := caller.Ask(ctx, chat, nil, nil)
	return err
}

// roundTrip posts a chat message and waits for its reply.
func roundTrip(caller *bus.Bus) error {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	chat := &mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageChat, Sender: "user:u1", Body: mcpgate.MessageBody{Text: "ping"}}
	if err := caller.Post(ctx, chat); err != nil {
		return err
	}
	_, err := caller.Await(ctx, "ch-1", chat.ID, nil)
	return err
}

// runAgent answers every chat message to "weather" until ctx ends, as a
// pull worker's stream would: wait for the inbox, claim, reply.
func runAgent(ctx context.Context, b *bus.Bus, s bus.Store) {
	inbox := b.Inbox(ctx, "weather")
	for {
		msgs, err := s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 100)
		if err != nil {
			return
		}
		for _, m := range msgs {
			reply := &mcpgate.Message{ChannelID: m.ChannelID, Type: mcpgate.MessageReply, InReplyTo: m.ID, Sender: "agent:weather",
				Body: mcpgate.MessageBody{Text: "pong"}}
			if err := b.Post(ctx, reply); err != nil {
				return
			}
		}
		if _, ok := <-inbox; !ok {
			return
		}
	}
}

// heartbeatWorkers is how many workers BenchmarkHeartbeat keeps online:
// each of an agent of its own, the worst case, since the workers of one
// agent's skill on one replica share one presence record.
const heartbeatWorkers = 100

// BenchmarkHeartbeat measures one heartbeat of a replica with 100 workers
// connected: the refresh of their presence records (what Bus does every
// Heartbeat), and the check a call waiting on one of them makes every
// heartbeat. It reports the database time a replica spends per second on
// refreshes at the default heartbeat ("refresh-ms/s").
func BenchmarkHeartbeat(b *testing.B) {
	b.Run("postgres", func(b *testing.B) {
		_, _, rs := mustReplicas(b, 1)
		benchHeartbeat(b, rs[0].store)
	})
	b.Run("sqlite", func(b *testing.B) { benchHeartbeat(b, mustSQLite(b)) })
}

// benchHeartbeat runs heartbeats of heartbeatWorkers agents' records in s.
func benchHeartbeat(b *testing.B, s interface {
	bus.Store
	mcpgate.AgentStore
	mcpgate.UserStore
}) {
	ctx := context.Background()
	u, err := s.FindUserByName(ctx, "alice")
	must(b, err)
	ids := make([]string, heartbeatWorkers)
	for i := range ids {
		ids[i] = fmt.Sprintf("worker-%03d", i)
		must(b, s.CreateAgent(ctx, &mcpgate.Agent{ID: ids[i], Name: ids[i], OwnerID: u.ID, Source: mcpgate.SourceAPI}))
	}
	b.Run("refresh-100", func(b *testing.B) {
		for b.Loop() {
			expires := time.Now().Add(bus.DefaultPresenceTTL)
			for _, id := range ids {
				must(b, s.PutPresence(ctx, id, "", "rep_bench", expires))
			}
		}
		perRound := b.Elapsed().Seconds() * 1000 / float64(b.N)
		b.ReportMetric(perRound/bus.DefaultHeartbeat.Seconds(), "refresh-ms/s")
	})
	b.Run("check-1", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Present(ctx, ids[0], "chat", time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
