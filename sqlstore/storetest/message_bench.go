package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// BenchMessageRoundTrip measures the store's part of one agent round trip
// whose message is claimed, as the bus and the inbox stream run it when no
// stream of the replica was offered: post the chat message, claim it for a
// worker, post the worker's reply (which acknowledges the message), and
// read the replies after the message, in a channel whose history grows.
func BenchMessageRoundTrip(b *testing.B, s mcpgate.Store) {
	benchRoundTrip(b, s, messageRoundTrip)
}

// BenchMessageRoundTripHandoff measures the same round trip when the
// message is handed to a stream as it is posted (PostDelivered): no claim.
func BenchMessageRoundTripHandoff(b *testing.B, s mcpgate.Store) {
	benchRoundTrip(b, s, handoffRoundTrip)
}

// BenchMessageRoundTripHanded measures it when the message is posted as
// the bus posts it for a stream of its replica (PostHanded): on SQLite
// the post returns before it commits, and the reply commits both.
func BenchMessageRoundTripHanded(b *testing.B, s mcpgate.Store) {
	mustHanding(b, s)
	benchRoundTrip(b, s, handedRoundTrip)
}

// BenchMessageRoundTripParallel measures the handed-over round trip of
// BenchMessageRoundTripHandoff run by eight goroutines at once, as
// concurrent calls run it: on SQLite their posts share transactions
// (group commit).
func BenchMessageRoundTripParallel(b *testing.B, s mcpgate.Store) {
	benchParallel(b, s, handoffRoundTrip)
}

// BenchMessageRoundTripHandedParallel is BenchMessageRoundTripParallel
// through PostHanded.
func BenchMessageRoundTripHandedParallel(b *testing.B, s mcpgate.Store) {
	mustHanding(b, s)
	benchParallel(b, s, handedRoundTrip)
}

// benchParallel runs roundTrip by eight goroutines at once on one channel.
func benchParallel(b *testing.B, s mcpgate.Store, roundTrip func(context.Context, mcpgate.Store, string) error) {
	ch := benchChannel(b, s)
	b.SetParallelism(4) // 8 on this machine's 2 cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := roundTrip(context.Background(), s, ch); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchChannel makes the agent "weather" and its channel "ch-bench".
func benchChannel(b *testing.B, s mcpgate.Store) string {
	u := mustUser(b, s, "bench")
	mustAgent(b, s, "weather", u.ID)
	ch := &mcpgate.Channel{ID: "ch-bench", AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID}
	if err := s.CreateChannel(context.Background(), ch); err != nil {
		b.Fatal(err)
	}
	return ch.ID
}

// benchRoundTrip runs roundTrip in a loop on a fresh channel.
func benchRoundTrip(b *testing.B, s mcpgate.Store, roundTrip func(context.Context, mcpgate.Store, string) error) {
	ctx := context.Background()
	ch := &mcpgate.Channel{ID: benchChannel(b, s)}
	for b.Loop() {
		if err := roundTrip(ctx, s, ch.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// messageRoundTrip runs the store calls of one round trip.
func messageRoundTrip(ctx context.Context, s mcpgate.Store, channelID string) error {
	chat := &mcpgate.Message{ChannelID: channelID, Type: mcpgate.MessageChat, Sender: "user:bench", Body: mcpgate.MessageBody{Text: "ping"}}
	if err := s.PostMessage(ctx, chat); err != nil {
		return err
	}
	if _, err := s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 100); err != nil {
		return err
	}
	reply := &mcpgate.Message{ChannelID: channelID, Type: mcpgate.MessageReply, InReplyTo: chat.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "pong"}}
	if err := s.PostMessage(ctx, reply); err != nil {
		return err
	}
	_, err := s.ListMessages(ctx, channelID, chat.Seq, 100)
	return err
}

// handoffRoundTrip runs the store calls of one round trip whose message is
// handed to a stream as it is posted.
func handoffRoundTrip(ctx context.Context, s mcpgate.Store, channelID string) error {
	return deliveredRoundTrip(ctx, s, channelID, s.PostDelivered)
}

// handedRoundTrip is handoffRoundTrip through PostHanded.
func handedRoundTrip(ctx context.Context, s mcpgate.Store, channelID string) error {
	h := s.(handingStore)
	return deliveredRoundTrip(ctx, s, channelID, func(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox) (bool, error) {
		return h.PostHanded(ctx, m, to, func(error) {})
	})
}

// deliveredRoundTrip runs the store calls of one round trip whose message
// is posted for a stream by post.
func deliveredRoundTrip(ctx context.Context, s mcpgate.Store, channelID string, post func(context.Context, *mcpgate.Message, mcpgate.Inbox) (bool, error)) error {
	chat := &mcpgate.Message{ChannelID: channelID, AgentID: "weather", Skill: "chat", Type: mcpgate.MessageChat, Sender: "user:bench", Body: mcpgate.MessageBody{Text: "ping"}}
	delivered, err := post(ctx, chat, mcpgate.Inbox{AgentID: "weather", Visibility: time.Minute})
	if err != nil {
		return err
	} else if !delivered {
		return fmt.Errorf("message %s not delivered as posted", chat.ID)
	}
	reply := &mcpgate.Message{ChannelID: channelID, AgentID: "weather", Type: mcpgate.MessageReply, InReplyTo: chat.ID, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "pong"}}
	if err := s.PostMessage(ctx, reply); err != nil {
		return err
	}
	_, err = s.ListMessages(ctx, channelID, chat.Seq, 100)
	return err
}
