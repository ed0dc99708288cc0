package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func messageTests() []test {
	return []test{
		{"Channels", testChannels},
		{"PostAndList", testPostAndList},
		{"PostErrors", testPostErrors},
		{"PostErrorsBesideHanded", testPostErrorsBesideHanded},
		{"FindReply", testFindReply},
		{"ClaimAndAck", testClaimAndAck},
		{"Redelivery", testRedelivery},
		{"ClaimOldestOfBoth", testClaimOldestOfBoth},
		{"RenewAndRelease", testRenewAndRelease},
		{"PostDelivered", testPostDelivered},
		{"PostDeliveredInOrder", testPostDeliveredInOrder},
		{"PostHanded", testPostHanded},
		{"PostHandedInOrder", testPostHandedInOrder},
		{"ConcurrentHandedPosts", testConcurrentHandedPosts},
		{"PostHandedFirst", testPostHandedFirst},
		{"PostHandedFirstInOrder", testPostHandedFirstInOrder},
		{"ConcurrentHandedFirstPosts", testConcurrentHandedFirstPosts},
		{"RepliesAcknowledge", testRepliesAcknowledge},
		{"PostReplyHanded", testPostReplyHanded},
		{"PostClaimedReply", testPostClaimedReply},
		{"ConcurrentPosts", testConcurrentPosts},
		{"SeqsInTransactions", testSeqsInTransactions},
		{"ConcurrentClaims", testConcurrentClaims},
		{"CascadeWithAgent", testMessagesCascade},
		{"Presence", testPresence},
		{"UnackedMessages", testUnackedMessages},
	}
}

// mustChannel creates a channel of the agent's skill.
func mustChannel(tb testing.TB, s mcpgate.Store, id, agentID, skill string) *mcpgate.Channel {
	tb.Helper()
	c := &mcpgate.Channel{ID: id, AgentID: agentID, Skill: skill, Owner: "user:u1"}
	must(tb, s.CreateChannel(context.Background(), c))
	return c
}

// mustPost posts a message of type typ with text on the channel.
func mustPost(tb testing.TB, s mcpgate.Store, channelID string, typ mcpgate.MessageType, inReplyTo, text string) *mcpgate.Message {
	tb.Helper()
	m := &mcpgate.Message{ChannelID: channelID, Type: typ, InReplyTo: inReplyTo, Sender: "user:u1", Body: mcpgate.MessageBody{Text: text}}
	must(tb, s.PostMessage(context.Background(), m))
	return m
}

// ids returns the IDs of msgs.
func ids(msgs []*mcpgate.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.ID)
	}
	return out
}

func testChannels(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	c := &mcpgate.Channel{ID: "ctx-1", AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID, SessionID: "sess-1",
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("X", 3600))}
	must(t, s.CreateChannel(ctx, c))
	got, err := s.FindChannel(ctx, "ctx-1")
	must(t, err)
	mustEqual(t, "FindChannel", got, c)
	mustEqual(t, "CreatedAt in UTC", got.CreatedAt.Location() == time.UTC, true)

	bare := &mcpgate.Channel{AgentID: "weather", Skill: "chat", Owner: "user:" + u.ID}
	must(t, s.CreateChannel(ctx, bare))
	if !strings.HasPrefix(bare.ID, "ch_") {
		t.Errorf("ID = %q, want ch_…", bare.ID)
	}
	mustStoredTime(t, "CreatedAt", bare.CreatedAt)
	got, err = s.FindChannel(ctx, bare.ID)
	must(t, err)
	mustEqual(t, "bare channel", got, bare)

	mustCode(t, s.CreateChannel(ctx, &mcpgate.Channel{ID: "ctx-1", AgentID: "weather", Skill: "chat"}), mcpgate.ECONFLICT)
	mustCode(t, s.CreateChannel(ctx, &mcpgate.Channel{ID: "ctx-2", AgentID: "nobody", Skill: "chat"}), mcpgate.EINVALID)
	_, err = s.FindChannel(ctx, "ctx-missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testPostAndList(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-1", "weather", "chat")
	created := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	chat := &mcpgate.Message{
		ID: "msg-1", ChannelID: "ch-1", Skill: "ignored", Type: mcpgate.MessageChat, Sender: "user:" + u.ID,
		Body: mcpgate.MessageBody{
			Text: "hello", Parts: []mcpgate.Content{mcpgate.TextContent("hello"), {Type: "image", Data: "aGk=", MimeType: "image/png"}},
			Data:        json.RawMessage(`{"city":"Oslo"}`),
			Attachments: []mcpgate.Attachment{{FileID: "file_1", Name: "a.csv", MimeType: "text/csv", Size: 12}},
		},
		Tool: "forecast", Arguments: json.RawMessage(`{"days":3}`), CreatedAt: created,
		Trace: mcpgate.TraceContext{Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", State: "vendor=x"},
	}
	must(t, s.PostMessage(ctx, chat))
	mustEqual(t, "agent and skill from the channel", []string{chat.AgentID, chat.Skill}, []string{"weather", "chat"})
	named := &mcpgate.Message{ChannelID: "ch-1", AgentID: "weather", Skill: "ignored", Type: mcpgate.MessageChat, Sender: "user:" + u.ID}
	must(t, s.PostMessage(ctx, named))
	mustEqual(t, "skill from the channel of the agent named", named.Skill, "chat")
	delta := mustPost(t, s, "ch-1", mcpgate.MessageReplyDelta, "msg-1", "thinking")
	reply := mustPost(t, s, "ch-1", mcpgate.MessageReply, "msg-1", "sunny")
	if !strings.HasPrefix(delta.ID, "msg_") {
		t.Errorf("ID = %q, want msg_…", delta.ID)
	}
	mustStoredTime(t, "CreatedAt", delta.CreatedAt)
	if !(chat.Seq > 0 && delta.Seq > chat.Seq && reply.Seq > delta.Seq) {
		t.Fatalf("seqs %d, %d, %d: want increasing from 1", chat.Seq, delta.Seq, reply.Seq)
	}

	all, err := s.ListMessages(ctx, "ch-1", 0, 10)
	must(t, err)
	mustEqual(t, "ListMessages", all, []*mcpgate.Message{chat, named, delta, reply})
	after, err := s.ListMessages(ctx, "ch-1", chat.Seq, 1)
	must(t, err)
	mustEqual(t, "after the first, limit 1", ids(after), []string{named.ID})
	none, err := s.ListMessages(ctx, "ch-missing", 0, 10)
	must(t, err)
	mustEqual(t, "unknown channel", len(none), 0)
}

func testPostErrors(t *testing.T, s mcpgate.Store) { postErrorCases(t, s, nil) }

// testPostErrorsBesideHanded runs testPostErrors' cases each right after
// a message handed over (PostHanded), which SQLite leaves uncommitted for
// what follows: each post fails alone, with its own error, and no handed
// message is lost.
func testPostErrorsBesideHanded(t *testing.T, s mcpgate.Store) {
	mustHanding(t, s)
	to := mcpgate.Inbox{AgentID: "weather", Skill: "chat", Visibility: time.Minute}
	handed := 0
	postErrorCases(t, s, func(t *testing.T) {
		postDelivered(t, s, byPostHanded, "ch-2", mcpgate.MessageChat, "", to)
		handed++
	})
	all, err := s.ListMessages(context.Background(), "ch-2", 0, 100)
	must(t, err)
	mustEqual(t, "handed messages stored", len(all), handed)
}

// postErrorCases posts messages that must fail, each with its code,
// calling before, when not nil, before each one; then it checks that they
// stored nothing on channel ch-1.
func postErrorCases(t *testing.T, s mcpgate.Store, before func(t *testing.T)) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustAgent(t, s, "other", u.ID)
	mustChannel(t, s, "ch-1", "weather", "chat")
	mustChannel(t, s, "ch-2", "weather", "chat")
	chat := mustPost(t, s, "ch-1", mcpgate.MessageChat, "", "hello")
	delta := mustPost(t, s, "ch-1", mcpgate.MessageReplyDelta, chat.ID, "…")
	mustPost(t, s, "ch-1", mcpgate.MessageReply, chat.ID, "hi")
	for _, tc := range []struct {
		name string
		m    mcpgate.Message
		code string
	}{
		{"unknown channel", mcpgate.Message{ChannelID: "ch-missing", Type: mcpgate.MessageChat}, mcpgate.ENOTFOUND},
		{"unknown channel of the agent named", mcpgate.Message{ChannelID: "ch-missing", AgentID: "weather", Type: mcpgate.MessageChat}, mcpgate.ENOTFOUND},
		{"channel of another agent than named", mcpgate.Message{ChannelID: "ch-1", AgentID: "other", Type: mcpgate.MessageChat}, mcpgate.ENOTFOUND},
		{"reply on a channel of another agent than named", mcpgate.Message{ChannelID: "ch-1", AgentID: "other", Type: mcpgate.MessageReplyDelta, InReplyTo: chat.ID}, mcpgate.ENOTFOUND},
		{"channel of an agent that does not exist", mcpgate.Message{ChannelID: "ch-1", AgentID: "nobody", Type: mcpgate.MessageChat}, mcpgate.ENOTFOUND},
		{"unknown type", mcpgate.Message{ChannelID: "ch-1", Type: "gossip"}, mcpgate.EINVALID},
		{"reply without in_reply_to", mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageReply}, mcpgate.EINVALID},
		{"cancel without in_reply_to", mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageCancel}, mcpgate.EINVALID},
		{"reply to another channel's message", mcpgate.Message{ChannelID: "ch-2", Type: mcpgate.MessageReply, InReplyTo: chat.ID}, mcpgate.EINVALID},
		{"reply to a delta", mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageReply, InReplyTo: delta.ID}, mcpgate.EINVALID},
		{"reply to nothing", mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageReply, InReplyTo: "msg-missing"}, mcpgate.EINVALID},
		{"duplicate ID", mcpgate.Message{ID: chat.ID, ChannelID: "ch-1", Type: mcpgate.MessageChat}, mcpgate.ECONFLICT},
		{"second final reply", mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageReply, InReplyTo: chat.ID}, mcpgate.ECONFLICT},
		{"error after reply", mcpgate.Message{ChannelID: "ch-1", Type: mcpgate.MessageError, InReplyTo: chat.ID}, mcpgate.ECONFLICT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if before != nil {
				before(t)
			}
			mustCode(t, s.PostMessage(ctx, &tc.m), tc.code)
		})
	}
	all, err := s.ListMessages(ctx, "ch-1", 0, 100)
	must(t, err)
	mustEqual(t, "messages after the failed posts", len(all), 3)
	mustPost(t, s, "ch-1", mcpgate.MessageReplyDelta, chat.ID, "a late delta is fine")
}

func testFindReply(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-1", "weather", "chat")
	chat := mustPost(t, s, "ch-1", mcpgate.MessageChat, "", "hello")
	other := mustPost(t, s, "ch-1", mcpgate.MessageChat, "", "and you?")
	_, err := s.FindReply(ctx, chat.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustPost(t, s, "ch-1", mcpgate.MessageReplyDelta, chat.ID, "hm")
	_, err = s.FindReply(ctx, chat.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	reply := mustPost(t, s, "ch-1", mcpgate.MessageReply, chat.ID, "hi")
	failure := mustPost(t, s, "ch-1", mcpgate.MessageError, other.ID, "no idea")
	got, err := s.FindReply(ctx, chat.ID)
	must(t, err)
	mustEqual(t, "reply", got, reply)
	got, err = s.FindReply(ctx, other.ID)
	must(t, err)
	mustEqual(t, "error", got, failure)
}

// claimFixture makes an agent with two skills and an inbox of three chat
// messages, two to "chat" and one to "search", and another agent with one.
func claimFixture(t *testing.T, s mcpgate.Store) (chat1, search, chat2 *mcpgate.Message) {
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustAgent(t, s, "other", u.ID)
	mustChannel(t, s, "ch-chat", "weather", "chat")
	mustChannel(t, s, "ch-search", "weather", "search")
	mustChannel(t, s, "ch-other", "other", "chat")
	chat1 = mustPost(t, s, "ch-chat", mcpgate.MessageChat, "", "one")
	search = mustPost(t, s, "ch-search", mcpgate.MessageChat, "", "two")
	mustPost(t, s, "ch-chat", mcpgate.MessageReplyDelta, chat1.ID, "not for the inbox")
	chat2 = mustPost(t, s, "ch-chat", mcpgate.MessageChat, "", "three")
	mustPost(t, s, "ch-other", mcpgate.MessageChat, "", "not this agent's")
	return chat1, search, chat2
}

func testClaimAndAck(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	chat1, search, chat2 := claimFixture(t, s)
	now, vis := time.Now(), 30*time.Second
	got, err := s.ClaimMessages(ctx, "weather", "chat", now, vis, 1)
	must(t, err)
	mustEqual(t, "first claim of chat", got, []*mcpgate.Message{chat1})
	got, err = s.ClaimMessages(ctx, "weather", "", now, vis, 10)
	must(t, err)
	mustEqual(t, "claim of all skills", ids(got), ids([]*mcpgate.Message{search, chat2}))
	got, err = s.ClaimMessages(ctx, "weather", "", now.Add(vis-time.Millisecond), vis, 10)
	must(t, err)
	mustEqual(t, "claim within the visibility", len(got), 0)

	must(t, s.AckMessage(ctx, "weather", chat1.ID))
	must(t, s.AckMessage(ctx, "weather", chat1.ID))
	mustCode(t, s.AckMessage(ctx, "other", search.ID), mcpgate.ENOTFOUND)
	mustCode(t, s.AckMessage(ctx, "weather", "msg-missing"), mcpgate.ENOTFOUND)
	got, err = s.ClaimMessages(ctx, "weather", "", now.Add(vis), vis, 10)
	must(t, err)
	mustEqual(t, "redelivered after the visibility, acked one left out", ids(got), ids([]*mcpgate.Message{search, chat2}))
}

func testRedelivery(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	chat1, _, _ := claimFixture(t, s)
	now, vis := time.Now(), 10*time.Second
	for attempt := range 3 {
		at := now.Add(time.Duration(attempt) * vis)
		got, err := s.ClaimMessages(ctx, "weather", "chat", at, vis, 1)
		must(t, err)
		mustEqual(t, fmt.Sprintf("attempt %d", attempt), got, []*mcpgate.Message{chat1})
	}
	must(t, s.AckMessage(ctx, "weather", chat1.ID))
	got, err := s.ClaimMessages(ctx, "weather", "chat", now.Add(10*vis), vis, 1)
	must(t, err)
	if len(got) == 1 && got[0].ID == chat1.ID {
		t.Fatal("an acknowledged message was delivered again")
	}
}

// testClaimOldestOfBoth checks that a claim takes the oldest claimable
// messages, by seq, whether never delivered (released here) or delivered
// before the visibility, when the two kinds alternate.
func testClaimOldestOfBoth(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-chat", "weather", "chat")
	var m []*mcpgate.Message
	for i := range 4 {
		m = append(m, mustPost(t, s, "ch-chat", mcpgate.MessageChat, "", fmt.Sprint("message ", i)))
	}
	now, vis := time.Now(), 10*time.Second
	_, err := s.ClaimMessages(ctx, "weather", "", now, vis, 3)
	must(t, err)
	must(t, s.ReleaseMessages(ctx, "weather", map[string]time.Time{m[1].ID: now}))
	// Claimable at now+vis: m0 and m2 delivered before it, m1 released
	// and m3 never delivered.
	got, err := s.ClaimMessages(ctx, "weather", "", now.Add(vis), vis, 2)
	must(t, err)
	mustEqual(t, "the two oldest", ids(got), ids(m[:2]))
	got, err = s.ClaimMessages(ctx, "weather", "", now.Add(vis), vis, 1)
	must(t, err)
	mustEqual(t, "the oldest left", ids(got), ids(m[2:3]))
	got, err = s.ClaimMessages(ctx, "weather", "", now.Add(vis), vis, 10)
	must(t, err)
	mustEqual(t, "the last one", ids(got), ids(m[3:]))
}

// testRenewAndRelease checks the leases of an open stream: renewed
// messages stay delivered past the visibility, released ones are claimable
// at once, and a holder whose lease lapsed and was claimed by another can
// neither renew nor release the new holder's delivery.
func testRenewAndRelease(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	chat1, search, chat2 := claimFixture(t, s)
	now, vis := time.Now(), 10*time.Second
	_, err := s.ClaimMessages(ctx, "weather", "", now, vis, 10)
	must(t, err)
	must(t, s.AckMessage(ctx, "weather", chat2.ID))
	held := map[string]time.Time{chat1.ID: now, search.ID: now, chat2.ID: now}
	renewed, err := s.RenewMessages(ctx, "weather", held, now.Add(vis-time.Second))
	must(t, err)
	slices.Sort(renewed)
	mustEqual(t, "renewed, the acked one left out", renewed, sortedIDs(chat1.ID, search.ID))
	got, err := s.ClaimMessages(ctx, "weather", "", now.Add(vis), vis, 10)
	must(t, err)
	mustEqual(t, "claim after the first visibility, all renewed", len(got), 0)

	at := now.Add(vis - time.Second)
	must(t, s.ReleaseMessages(ctx, "weather", map[string]time.Time{chat1.ID: at}))
	got, err = s.ClaimMessages(ctx, "weather", "", at, vis, 10)
	must(t, err)
	mustEqual(t, "claim right after the release", ids(got), ids([]*mcpgate.Message{chat1}))

	stale := map[string]time.Time{chat1.ID: now, search.ID: at} // chat1 was claimed again at at
	renewed, err = s.RenewMessages(ctx, "weather", stale, at.Add(time.Second))
	must(t, err)
	mustEqual(t, "renewed by a stale holder", renewed, []string{search.ID})
	must(t, s.ReleaseMessages(ctx, "weather", map[string]time.Time{chat1.ID: now}))
	got, err = s.ClaimMessages(ctx, "weather", "", at.Add(time.Second), vis, 10)
	must(t, err)
	mustEqual(t, "claim after a stale holder's release", len(got), 0)
	renewed, err = s.RenewMessages(ctx, "weather", nil, now)
	must(t, err)
	mustEqual(t, "renew of nothing", len(renewed), 0)
}

// handingStore is a Store that can return from a delivered post before
// it commits (the bus's HandingStore).
type handingStore interface {
	PostHanded(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, lost func(error)) (bool, error)
}

// deliverer posts m for the inbox to, as PostDelivered does.
type deliverer func(tb testing.TB, s mcpgate.Store, m *mcpgate.Message, to mcpgate.Inbox) (bool, error)

// byPostDelivered posts through PostDelivered.
func byPostDelivered(_ testing.TB, s mcpgate.Store, m *mcpgate.Message, to mcpgate.Inbox) (bool, error) {
	return s.PostDelivered(context.Background(), m, to)
}

// byPostHanded posts through PostHanded; a message it loses fails the
// test.
func byPostHanded(tb testing.TB, s mcpgate.Store, m *mcpgate.Message, to mcpgate.Inbox) (bool, error) {
	lost := func(err error) { tb.Errorf("message %s lost: %v", m.ID, err) }
	return s.(handingStore).PostHanded(context.Background(), m, to, lost)
}

// firstHandingStore is a Store that may hand a new chat_message over
// before storing it (the bus's FirstHandingStore).
type firstHandingStore interface {
	PostHandedFirst(ctx context.Context, m *mcpgate.Message, to mcpgate.Inbox, hand func(), lost func(error)) (bool, error)
}

// byPostHandedFirst posts through PostHandedFirst, naming the agent and
// skill of m's channel as the bus's Ask does; a message it loses fails
// the test, and so does a message handed over first and then reported
// undelivered, or handed over without its seq.
func byPostHandedFirst(tb testing.TB, s mcpgate.Store, m *mcpgate.Message, to mcpgate.Inbox) (bool, error) {
	ctx := context.Background()
	if c, err := s.FindChannel(ctx, m.ChannelID); err == nil {
		m.AgentID, m.Skill = c.AgentID, c.Skill
	}
	handed := false
	hand := func() {
		if m.Seq == 0 {
			tb.Errorf("message %s handed over without its seq", m.ID)
		}
		handed = true
	}
	lost := func(err error) { tb.Errorf("message %s lost: %v", m.ID, err) }
	delivered, err := s.(firstHandingStore).PostHandedFirst(ctx, m, to, hand, lost)
	if handed && (!delivered || err != nil) {
		tb.Errorf("message %s handed over first, then delivered %v, %v", m.ID, delivered, err)
	}
	return delivered, err
}

// mustFirstHanding skips the test unless s is a firstHandingStore.
func mustFirstHanding(tb testing.TB, s mcpgate.Store) {
	if _, ok := s.(firstHandingStore); !ok {
		tb.Skip("the store has no PostHandedFirst")
	}
}

// mustHanding skips the test or benchmark unless s is a handingStore.
func mustHanding(tb testing.TB, s mcpgate.Store) {
	if _, ok := s.(handingStore); !ok {
		tb.Skip("the store has no PostHanded")
	}
}

// postDelivered posts a message of type typ on the channel for the inbox to
// through post and returns it and whether the store delivered it as it was
// posted.
func postDelivered(tb testing.TB, s mcpgate.Store, post deliverer, channelID string, typ mcpgate.MessageType, inReplyTo string, to mcpgate.Inbox) (*mcpgate.Message, bool) {
	tb.Helper()
	m := &mcpgate.Message{ChannelID: channelID, Type: typ, InReplyTo: inReplyTo, Sender: "user:u1", Body: mcpgate.MessageBody{Text: "hi"}}
	delivered, err := post(tb, s, m, to)
	must(tb, err)
	return m, delivered
}

// testPostDelivered checks that a message posted for an inbox stream is
// stored delivered to it, as a claim at its CreatedAt would have: not
// claimable within the visibility, claimable after it, renewable and
// releasable by its holder; and that messages of another agent or skill,
// or not to the workers, are posted undelivered.
func testPostDelivered(t *testing.T, s mcpgate.Store) { postDeliveredCases(t, s, byPostDelivered) }

// testPostHanded checks that PostHanded posts as PostDelivered does, and
// that each read and write that follows finds the message it returned.
func testPostHanded(t *testing.T, s mcpgate.Store) {
	mustHanding(t, s)
	postDeliveredCases(t, s, byPostHanded)
}

// testPostHandedFirst checks that PostHandedFirst posts as PostDelivered
// does, whether or not it hands a message over first.
func testPostHandedFirst(t *testing.T, s mcpgate.Store) {
	mustFirstHanding(t, s)
	postDeliveredCases(t, s, byPostHandedFirst)
}

// testPostHandedFirstInOrder checks that PostHandedFirst delivers no
// message while an older one of the inbox is claimable, as
// PostDelivered does, though it may know it without reading.
func testPostHandedFirstInOrder(t *testing.T, s mcpgate.Store) {
	mustFirstHanding(t, s)
	postInOrderCases(t, s, byPostHandedFirst)
}

// testConcurrentHandedFirstPosts is testConcurrentPosts with every post
// made through PostHandedFirst: a message handed over before its
// statements ran must not let a later one be seen first either.
func testConcurrentHandedFirstPosts(t *testing.T, s mcpgate.Store) {
	mustFirstHanding(t, s)
	concurrentPosts(t, s, byPostHandedFirst)
}

// postDeliveredCases are testPostDelivered's, posting through post.
func postDeliveredCases(t *testing.T, s mcpgate.Store, post deliverer) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-chat", "weather", "chat")
	mustChannel(t, s, "ch-search", "weather", "search")
	vis := 10 * time.Second
	to := mcpgate.Inbox{AgentID: "weather", Skill: "chat", Visibility: vis}
	m, delivered := postDelivered(t, s, post, "ch-chat", mcpgate.MessageChat, "", to)
	mustEqual(t, "delivered as posted", delivered, true)
	stored, err := s.FindMessage(ctx, m.ID)
	must(t, err)
	mustEqual(t, "stored", stored, m)
	got, err := s.ClaimMessages(ctx, "weather", "", m.CreatedAt.Add(vis-time.Millisecond), vis, 10)
	must(t, err)
	mustEqual(t, "claim within the visibility", len(got), 0)
	renewed, err := s.RenewMessages(ctx, "weather", map[string]time.Time{m.ID: m.CreatedAt}, m.CreatedAt.Add(time.Second))
	must(t, err)
	mustEqual(t, "renewed by its holder", renewed, []string{m.ID})
	must(t, s.ReleaseMessages(ctx, "weather", map[string]time.Time{m.ID: m.CreatedAt.Add(time.Second)}))
	got, err = s.ClaimMessages(ctx, "weather", "", m.CreatedAt.Add(time.Second), vis, 10)
	must(t, err)
	mustEqual(t, "claimable once released", ids(got), []string{m.ID})

	_, delivered = postDelivered(t, s, post, "ch-search", mcpgate.MessageChat, "", to)
	mustEqual(t, "another skill's message delivered", delivered, false)
	_, delivered = postDelivered(t, s, post, "ch-chat", mcpgate.MessageReply, m.ID, to)
	mustEqual(t, "a reply delivered", delivered, false)
	_, delivered = postDelivered(t, s, post, "ch-chat", mcpgate.MessageChat, "", mcpgate.Inbox{AgentID: "other", Visibility: vis})
	mustEqual(t, "another agent's message delivered", delivered, false)
	cancel, delivered := postDelivered(t, s, post, "ch-chat", mcpgate.MessageCancel, m.ID, mcpgate.Inbox{AgentID: "weather", Visibility: vis})
	mustEqual(t, "a cancel to a stream of all skills delivered", delivered, false) // the search message waits
	got, err = s.ClaimMessages(ctx, "weather", "", m.CreatedAt.Add(2*vis), vis, 10)
	must(t, err)
	mustEqual(t, "claimable: the undelivered ones", len(got), 3)
	mustEqual(t, "the cancel among them", got[len(got)-1].ID, cancel.ID)
}

// testPostDeliveredInOrder checks that a message is not delivered as it is
// posted while an older one of the same inbox is claimable (never
// delivered, or its visibility passed), so that a stream sends in seq
// order; an older one of another skill does not count for a stream of one
// skill, and one delivered within the visibility does not count.
func testPostDeliveredInOrder(t *testing.T, s mcpgate.Store) {
	postInOrderCases(t, s, byPostDelivered)
}

// testPostHandedInOrder is testPostDeliveredInOrder through PostHanded.
func testPostHandedInOrder(t *testing.T, s mcpgate.Store) {
	mustHanding(t, s)
	postInOrderCases(t, s, byPostHanded)
}

// postInOrderCases are testPostDeliveredInOrder's, posting through post.
func postInOrderCases(t *testing.T, s mcpgate.Store, post deliverer) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-chat", "weather", "chat")
	mustChannel(t, s, "ch-search", "weather", "search")
	vis := time.Minute
	chat := mcpgate.Inbox{AgentID: "weather", Skill: "chat", Visibility: vis}
	all := mcpgate.Inbox{AgentID: "weather", Visibility: vis}
	mustPost(t, s, "ch-search", mcpgate.MessageChat, "", "waits")
	_, delivered := postDelivered(t, s, post, "ch-chat", mcpgate.MessageChat, "", chat)
	mustEqual(t, "delivered past another skill's waiting message", delivered, true)
	_, delivered = postDelivered(t, s, post, "ch-chat", mcpgate.MessageChat, "", all)
	mustEqual(t, "delivered to all skills past a waiting message", delivered, false)
	got, err := s.ClaimMessages(ctx, "weather", "", time.Now(), vis, 10)
	must(t, err)
	mustEqual(t, "claimed", len(got), 2)
	_, delivered = postDelivered(t, s, post, "ch-chat", mcpgate.MessageChat, "", all)
	mustEqual(t, "delivered past messages delivered within the visibility", delivered, true)
	late := mcpgate.Inbox{AgentID: "weather", Visibility: time.Millisecond}
	time.Sleep(5 * time.Millisecond) // the claim above is older than late's visibility
	_, delivered = postDelivered(t, s, post, "ch-chat", mcpgate.MessageChat, "", late)
	mustEqual(t, "delivered past messages whose visibility passed", delivered, false)
}

// sortedIDs returns the IDs sorted.
func sortedIDs(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

func testRepliesAcknowledge(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	chat1, search, chat2 := claimFixture(t, s)
	now, vis := time.Now(), time.Second
	_, err := s.ClaimMessages(ctx, "weather", "", now, vis, 10)
	must(t, err)
	mustPost(t, s, "ch-chat", mcpgate.MessageReply, chat1.ID, "done")
	mustPost(t, s, "ch-search", mcpgate.MessageError, search.ID, "failed")
	cancel := mustPost(t, s, "ch-chat", mcpgate.MessageCancel, chat2.ID, "")
	got, err := s.ClaimMessages(ctx, "weather", "", now.Add(vis), vis, 10)
	must(t, err)
	mustEqual(t, "after replies and a cancel, only the cancel", got, []*mcpgate.Message{cancel})
	must(t, s.AckMessage(ctx, "weather", cancel.ID))
	got, err = s.ClaimMessages(ctx, "weather", "", now.Add(2*vis), vis, 10)
	must(t, err)
	mustEqual(t, "after acking the cancel", len(got), 0)
}

// replyHandingStore is a Store that can hand a reply over before it
// commits (the bus's HandingStore).
type replyHandingStore interface {
	PostReplyHanded(ctx context.Context, m *mcpgate.Message, hand func()) error
}

// testPostReplyHanded checks PostReplyHanded as testRepliesAcknowledge
// does PostMessage: a final reply is stored and acknowledges the message
// it answers, and hand is called once before PostReplyHanded returns; a
// reply the store refuses (a second final reply, or one to no
// chat_message) returns its error without calling hand.
func testPostReplyHanded(t *testing.T, s mcpgate.Store) {
	h, ok := s.(replyHandingStore)
	if !ok {
		t.Skip("the store has no PostReplyHanded")
	}
	ctx := context.Background()
	chat1, search, chat2 := claimFixture(t, s)
	now, vis := time.Now(), time.Second
	_, err := s.ClaimMessages(ctx, "weather", "", now, vis, 10)
	must(t, err)
	hands := 0
	post := func(channelID string, typ mcpgate.MessageType, inReplyTo string) (*mcpgate.Message, error) {
		m := &mcpgate.Message{ChannelID: channelID, Type: typ, InReplyTo: inReplyTo, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "done"}}
		return m, h.PostReplyHanded(ctx, m, func() { hands++ })
	}
	reply, err := post("ch-chat", mcpgate.MessageReply, chat1.ID)
	must(t, err)
	mustEqual(t, "hand calls after a reply", hands, 1)
	stored, err := s.FindReply(ctx, chat1.ID)
	must(t, err)
	mustEqual(t, "the reply stored", stored, reply)
	_, err = post("ch-search", mcpgate.MessageError, search.ID)
	must(t, err)
	got, err := s.ClaimMessages(ctx, "weather", "", now.Add(vis), vis, 10)
	must(t, err)
	mustEqual(t, "claimable after the replies: the unanswered one", ids(got), []string{chat2.ID})
	_, err = post("ch-chat", mcpgate.MessageReply, chat1.ID)
	mustCode(t, err, mcpgate.ECONFLICT)
	_, err = post("ch-chat", mcpgate.MessageReply, "msg_none")
	mustCode(t, err, mcpgate.EINVALID)
	mustEqual(t, "hand calls after two refused replies", hands, 2)
}

// claimingStore is a Store that takes a final reply the bus vouches for
// (the bus's ClaimingStore).
type claimingStore interface {
	PostClaimedReply(ctx context.Context, m *mcpgate.Message, lost func(error)) error
}

// testPostClaimedReply checks that a reply the caller vouches for (its
// agent and its channel's skill named) is stored as PostReplyHanded
// stores it, acknowledging the message it answers, and found by the next
// read, though it may return before its commit; that a second final
// reply is still ECONFLICT, and a reply on a channel deleted with its
// agent still ENOTFOUND, though the store need not check the target.
func testPostClaimedReply(t *testing.T, s mcpgate.Store) {
	c, ok := s.(claimingStore)
	if !ok {
		t.Skip("the store has no PostClaimedReply")
	}
	ctx := context.Background()
	chat1, _, chat2 := claimFixture(t, s)
	post := func(inReplyTo string) (*mcpgate.Message, error) {
		m := &mcpgate.Message{ChannelID: "ch-chat", AgentID: "weather", Skill: "chat", Type: mcpgate.MessageReply,
			InReplyTo: inReplyTo, Sender: "agent:weather", Body: mcpgate.MessageBody{Text: "done"}}
		return m, c.PostClaimedReply(ctx, m, func(err error) { t.Errorf("reply %s lost: %v", m.ID, err) })
	}
	reply, err := post(chat1.ID)
	must(t, err)
	stored, err := s.FindReply(ctx, chat1.ID)
	must(t, err)
	mustEqual(t, "the reply stored", stored, reply)
	got, err := s.ClaimMessages(ctx, "weather", "chat", time.Now(), time.Second, 10)
	must(t, err)
	mustEqual(t, "claimable after the reply: the unanswered one", ids(got), []string{chat2.ID})
	_, err = post(chat1.ID)
	mustCode(t, err, mcpgate.ECONFLICT)
	// A post that succeeds after the refused one, so that a store that
	// keeps seqs in memory (SQLite's blocks, emptied when a transaction is
	// rolled back) has some left: the reply below then fails at its insert,
	// on its channel, not at taking its seq, on its agent.
	mustPost(t, s, "ch-search", mcpgate.MessageChat, "", "four")
	must(t, s.DeleteAgent(ctx, "weather"))
	_, err = post(chat2.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
}

// testConcurrentPosts has 8 writers post to one channel while a reader
// tails it with ListMessages after the last seq it saw, as an inbox stream
// resumes: the reader must see every seq from 1 up without a gap, which
// fails if a post can commit after one with a greater seq.
func testConcurrentPosts(t *testing.T, s mcpgate.Store) { concurrentPosts(t, s, nil) }

// testConcurrentHandedPosts is testConcurrentPosts with every post made
// through PostHanded: a post that returned before it committed must not
// let a later one be seen first either.
func testConcurrentHandedPosts(t *testing.T, s mcpgate.Store) {
	mustHanding(t, s)
	concurrentPosts(t, s, byPostHanded)
}

// concurrentPosts is testConcurrentPosts, posting through post when it is
// not nil (postMany).
func concurrentPosts(t *testing.T, s mcpgate.Store, post deliverer) {
	const writers, rounds = 8, 24
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-1", "weather", "chat")
	mustChannel(t, s, "ch-2", "weather", "chat")
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() { errs <- postMany(t, s, post, w, rounds) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	seen, err := tail(ctx, s, "ch-1", done)
	close(errs)
	for err := range errs {
		must(t, err)
	}
	must(t, err)
	for i, seq := range seen {
		if i > 0 && seq <= seen[i-1] {
			t.Fatalf("seq %d after %d", seq, seen[i-1])
		}
	}
	mustEqual(t, "messages seen on ch-1", len(seen), writers*rounds/2)
}

// testSeqsInTransactions checks that seqs keep increasing across posts
// made inside Tx, committed or rolled back, and posts made outside it.
func testSeqsInTransactions(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-1", "weather", "chat")
	first := mustPost(t, s, "ch-1", mcpgate.MessageChat, "", "one")
	var inTx *mcpgate.Message
	must(t, s.Tx(ctx, func(tx mcpgate.Store) error {
		inTx = mustPost(t, tx, "ch-1", mcpgate.MessageChat, "", "two")
		return nil
	}))
	rollBack := errors.New("roll back")
	err := s.Tx(ctx, func(tx mcpgate.Store) error {
		mustPost(t, tx, "ch-1", mcpgate.MessageChat, "", "gone")
		return rollBack
	})
	if !errors.Is(err, rollBack) {
		t.Fatalf("Tx returned %v, want its fn's error", err)
	}
	last := mustPost(t, s, "ch-1", mcpgate.MessageChat, "", "three")
	all, err := s.ListMessages(ctx, "ch-1", 0, 10)
	must(t, err)
	mustEqual(t, "messages", ids(all), []string{first.ID, inTx.ID, last.ID})
	if !(first.Seq < inTx.Seq && inTx.Seq < last.Seq) {
		t.Errorf("seqs %d, %d, %d: want increasing", first.Seq, inTx.Seq, last.Seq)
	}
}

// postMany posts rounds chat messages, alternately to ch-1 and ch-2, so
// that seqs of one agent interleave across channels; through post when
// it is not nil, for an inbox of the agent, and PostMessage otherwise.
func postMany(tb testing.TB, s mcpgate.Store, post deliverer, w, rounds int) error {
	for i := range rounds {
		m := &mcpgate.Message{ChannelID: fmt.Sprintf("ch-%d", 1+i%2), Type: mcpgate.MessageChat, Sender: "user:u1",
			Body: mcpgate.MessageBody{Text: fmt.Sprintf("%d/%d", w, i)}}
		var err error
		if post != nil {
			_, err = post(tb, s, m, mcpgate.Inbox{AgentID: "weather", Visibility: time.Minute})
		} else {
			err = s.PostMessage(context.Background(), m)
		}
		if err != nil {
			return fmt.Errorf("writer %d: %w", w, err)
		}
	}
	return nil
}

// tail reads the channel after the last seq it saw until done is closed
// and one more read finds nothing new, returning the seqs in order.
func tail(ctx context.Context, s mcpgate.Store, channelID string, done <-chan struct{}) ([]int64, error) {
	var seen []int64
	after, finished := int64(0), false
	for {
		msgs, err := s.ListMessages(ctx, channelID, after, 7)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			seen, after = append(seen, m.Seq), m.Seq
		}
		if finished && len(msgs) == 0 {
			return seen, nil
		}
		select {
		case <-done:
			finished = true
		default:
		}
	}
}

// testConcurrentClaims has 4 workers claim an inbox of 100 messages at
// once: each message must go to exactly one of them.
func testConcurrentClaims(t *testing.T, s mcpgate.Store) {
	const workers, messages = 4, 100
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustChannel(t, s, "ch-1", "weather", "chat")
	var want []string
	for i := range messages {
		want = append(want, mustPost(t, s, "ch-1", mcpgate.MessageChat, "", fmt.Sprint(i)).ID)
	}
	now := time.Now()
	got := make([][]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { got[w], errs[w] = claimAll(ctx, s, now) })
	}
	wg.Wait()
	var all []string
	for w := range workers {
		must(t, errs[w])
		all = append(all, got[w]...)
	}
	slices.Sort(all)
	slices.Sort(want)
	mustEqual(t, "claimed messages", all, want)
}

// claimAll claims batches of 3 until the inbox has nothing left.
func claimAll(ctx context.Context, s mcpgate.Store, now time.Time) ([]string, error) {
	var out []string
	for {
		msgs, err := s.ClaimMessages(ctx, "weather", "", now, time.Hour, 3)
		if err != nil || len(msgs) == 0 {
			return out, err
		}
		out = append(out, ids(msgs)...)
	}
}

func testMessagesCascade(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	chat1, _, _ := claimFixture(t, s)
	must(t, s.DeleteAgent(ctx, "weather"))
	_, err := s.FindChannel(ctx, "ch-chat")
	mustCode(t, err, mcpgate.ENOTFOUND)
	msgs, err := s.ListMessages(ctx, "ch-chat", 0, 10)
	must(t, err)
	mustEqual(t, "messages of a deleted agent", len(msgs), 0)
	_, err = s.FindReply(ctx, chat1.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	left, err := s.ListMessages(ctx, "ch-other", 0, 10)
	must(t, err)
	mustEqual(t, "messages of the other agent", len(left), 1)
}

func testPresence(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustAgent(t, s, "other", u.ID)
	now := time.Now()
	present := func(agentID, skill string, at time.Time) bool {
		t.Helper()
		ok, err := s.Present(ctx, agentID, skill, at)
		must(t, err)
		return ok
	}
	mustEqual(t, "before any record", present("weather", "chat", now), false)
	must(t, s.PutPresence(ctx, "weather", "chat", "rep-a", now.Add(30*time.Second)))
	mustEqual(t, "present for its skill", present("weather", "chat", now), true)
	mustEqual(t, "present for any skill", present("weather", "", now), true)
	mustEqual(t, "not for another skill", present("weather", "search", now), false)
	mustEqual(t, "not for another agent", present("other", "chat", now), false)
	mustEqual(t, "expired", present("weather", "chat", now.Add(30*time.Second)), false)

	must(t, s.PutPresence(ctx, "weather", "chat", "rep-a", now.Add(time.Minute)))
	mustEqual(t, "refreshed", present("weather", "chat", now.Add(30*time.Second)), true)
	must(t, s.PutPresence(ctx, "weather", "", "rep-b", now.Add(30*time.Second)))
	mustEqual(t, "a worker of all skills takes search", present("weather", "search", now), true)

	must(t, s.DeletePresence(ctx, "weather", "chat", "rep-a"))
	must(t, s.DeletePresence(ctx, "weather", "chat", "rep-a"))
	mustEqual(t, "rep-b still takes chat", present("weather", "chat", now), true)
	must(t, s.DeletePresence(ctx, "weather", "", "rep-b"))
	mustEqual(t, "after both left", present("weather", "chat", now), false)
	mustCode(t, s.PutPresence(ctx, "nobody", "chat", "rep-a", now.Add(time.Minute)), mcpgate.ENOTFOUND)
}

// queueDepths is the store's count of each agent's unacknowledged messages.
type queueDepths interface {
	UnackedMessages(ctx context.Context) (map[string]int, error)
}

func testUnackedMessages(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	q, ok := s.(queueDepths)
	if !ok {
		t.Fatalf("%T has no UnackedMessages", s)
	}
	chat1, _, _ := claimFixture(t, s)
	got, err := q.UnackedMessages(ctx)
	must(t, err)
	mustEqual(t, "depths before an ack", got, map[string]int{"weather": 3, "other": 1})
	_, err = s.ClaimMessages(ctx, "weather", "", time.Now(), time.Minute, 10)
	must(t, err)
	must(t, s.AckMessage(ctx, "weather", chat1.ID))
	got, err = q.UnackedMessages(ctx)
	must(t, err)
	mustEqual(t, "depths after one ack (claimed ones still count)", got, map[string]int{"weather": 2, "other": 1})
}
