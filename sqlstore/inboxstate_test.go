package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TestInboxStateFree: an inbox is known free only after a check found it
// so, until a message delivered since reaches the time given (unless
// acknowledged or delivered again later), or something makes a message
// claimable; a check that began before such a change teaches nothing.
func TestInboxStateFree(t *testing.T) {
	st := newInboxState()
	if st.free("a", 0) {
		t.Fatal("an inbox never checked is free")
	}
	st.checked("a", st.generation(), 0)
	st.delivered("a", "m1", 100)
	st.delivered("a", "m2", 200)
	for _, c := range []struct {
		at   int64
		want bool
	}{{99, true}, {100, false}, {150, false}} {
		if got := st.free("a", c.at); got != c.want {
			t.Errorf("free at %d = %v, want %v", c.at, got, c.want)
		}
	}
	st.delivered("a", "m1", 300) // claimed or renewed again
	if !st.free("a", 150) || st.free("a", 200) {
		t.Error("a message delivered again is still taken at its first delivery")
	}
	st.acked("a", "m2")
	if !st.free("a", 250) {
		t.Error("an acknowledged message still holds the inbox")
	}
	gen := st.generation()
	st.unfree("a")
	if st.free("a", 0) {
		t.Error("free after unfree")
	}
	st.checked("a", gen, 0) // began before the change
	if st.free("a", 0) {
		t.Error("a check that began before a change made the inbox free")
	}
	st.checked("a", st.generation(), 0)
	if !st.free("a", 0) || st.free("b", 0) {
		t.Error("a check made the wrong inbox free")
	}
}

// TestInboxStateCheckDropsAnswered: a check that finds the inbox free at
// a time drops the messages held since delivered before it (they were
// acknowledged by a path the state did not see), and keeps the others.
func TestInboxStateCheckDropsAnswered(t *testing.T) {
	st := newInboxState()
	st.delivered("a", "old", 10)
	st.delivered("a", "new", 20)
	st.checked("a", st.generation(), 15)
	if _, ok := st.agents["a"].held["old"]; ok {
		t.Error("a message delivered before a free check is still held")
	}
	if !st.free("a", 19) || st.free("a", 20) {
		t.Error("the message delivered after the check no longer holds the inbox")
	}
}

// TestInboxStateForget: forget drops the inboxes and channels known.
func TestInboxStateForget(t *testing.T) {
	st := newInboxState()
	st.checked("a", st.generation(), 0)
	st.learnChannel("ch", "a", "chat")
	if !st.free("a", 0) || !st.channel("ch", "a", "chat") || st.channel("ch", "a", "other") || st.channel("ch", "b", "chat") {
		t.Fatal("the state did not learn the inbox and the channel as told")
	}
	st.forget()
	if st.free("a", 0) || st.channel("ch", "a", "chat") {
		t.Error("the state knows an inbox or a channel after forget")
	}
}

// TestInboxStateHeapBounded: deliveries acknowledged behind one still
// held do not pile up in the order of deliveries.
func TestInboxStateHeapBounded(t *testing.T) {
	st := newInboxState()
	st.checked("a", st.generation(), 0)
	st.delivered("a", "long", 1)
	for i := range 10_000 {
		id := fmt.Sprintf("m%d", i)
		st.delivered("a", id, int64(i+2))
		st.acked("a", id)
	}
	a := st.agents["a"]
	if len(a.byTime) > 2*len(a.held)+65 {
		t.Errorf("%d deliveries ordered for %d held", len(a.byTime), len(a.held))
	}
	if st.free("a", 1) || !st.free("a", 0) {
		t.Error("the message still held no longer holds the inbox")
	}
}

// TestDeliveriesHeap: the deliveries come out of the heap oldest first.
func TestDeliveriesHeap(t *testing.T) {
	var h deliveries
	for _, at := range []int64{5, 3, 9, 1, 7, 3, 8} {
		h.push(delivery{id: fmt.Sprint(at), at: at})
	}
	var got []int64
	for len(h) > 0 {
		got = append(got, h.pop().at)
	}
	want := []int64{1, 3, 3, 5, 7, 8, 9}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("popped %v, want %v", got, want)
	}
}

// handFirstFixture is a Store on the product's schema with an agent whose
// inbox holds nothing, for PostHandedFirst.
type handFirstFixture struct {
	s  *Store
	to mcpgate.Inbox
}

// constraintDialect is groupDialect telling SQLite's unique and foreign
// key violations apart, as the sqlite package's dialect does.
type constraintDialect struct{ groupDialect }

func (constraintDialect) Violation(err error) Violation {
	switch {
	case err == nil:
		return Violation{}
	case strings.Contains(err.Error(), "UNIQUE constraint failed"):
		return Violation{Kind: UniqueViolation}
	case strings.Contains(err.Error(), "FOREIGN KEY constraint failed"):
		return Violation{Kind: ForeignKeyViolation}
	}
	return Violation{}
}

func newHandFirstFixture(t *testing.T) *handFirstFixture {
	t.Helper()
	s, _, _ := mustMessageStore(t)
	s.d, s.inbox = constraintDialect{}, newInboxState()
	ctx := context.Background()
	u, err := s.FindUserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, &mcpgate.Agent{ID: "tide", Name: "tide", OwnerID: u.ID, Source: mcpgate.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateChannel(ctx, &mcpgate.Channel{ID: "ch-t", AgentID: "tide", Skill: "chat", Owner: "user:" + u.ID}); err != nil {
		t.Fatal(err)
	}
	return &handFirstFixture{s: s, to: mcpgate.Inbox{AgentID: "tide", Visibility: time.Second}}
}

// post posts a chat_message created at at through PostHandedFirst, and
// returns it, whether it was delivered, whether it was handed over
// first, and the post's error. A message handed over must have its seq,
// and the Store must already send readers to settle, which waits for the
// message's statements and commit.
func (f *handFirstFixture) post(t *testing.T, id string, at time.Time) (*mcpgate.Message, bool, bool, error) {
	t.Helper()
	m := &mcpgate.Message{ID: id, ChannelID: "ch-t", AgentID: "tide", Skill: "chat", Type: mcpgate.MessageChat,
		Sender: "user:u", CreatedAt: at, Body: mcpgate.MessageBody{Text: "tide?"}}
	handed := false
	delivered, err := f.s.PostHandedFirst(context.Background(), m, f.to, func() {
		if m.Seq == 0 {
			t.Error("a message was handed over before it had its seq")
		}
		if !f.s.unsettled.Load() {
			// A reader it reaches would not wait for its statements.
			t.Error("a message was handed over with no transaction marked unsettled")
		}
		handed = true
	}, func(err error) { t.Errorf("lost: %v", err) })
	return m, delivered, handed, err
}

// TestPostHandedFirst: the first chat_message to an inbox goes through the
// check, and later ones are handed over before their statements run
// (a duplicate ID, which the insert refuses, is refused after its handover);
// an undelivered message, a release, or a delivered message reaching its
// visibility unanswered send the next post to the check again, which then
// does not deliver it.
func TestPostHandedFirst(t *testing.T) {
	f := newHandFirstFixture(t)
	now := time.Now()
	_, delivered, handed, err := f.post(t, "", now)
	if err != nil || !delivered || handed {
		t.Fatalf("first post: delivered %v, handed first %v, %v; want delivered through the check", delivered, handed, err)
	}
	m2, delivered, handed, err := f.post(t, "", now.Add(time.Millisecond))
	if err != nil || !delivered || !handed {
		t.Fatalf("second post: delivered %v, handed first %v, %v; want handed first", delivered, handed, err)
	}
	_, delivered, handed, err = f.post(t, m2.ID, now.Add(2*time.Millisecond))
	if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT || !delivered || !handed {
		t.Fatalf("a duplicate ID: delivered %v, handed first %v, %v; want handed first, then ECONFLICT", delivered, handed, err)
	}
	got, err := f.s.FindMessage(context.Background(), m2.ID)
	if err != nil || got.Seq != m2.Seq || got.Body.Text != "tide?" {
		t.Fatalf("the message handed first is stored as %+v, %v", got, err)
	}
	// m1 and m2 are a second old, unanswered: claimable again.
	_, delivered, handed, err = f.post(t, "", now.Add(1500*time.Millisecond))
	if err != nil || delivered || handed {
		t.Fatalf("past the visibility of unanswered messages: delivered %v, handed first %v, %v; want neither", delivered, handed, err)
	}
}

// TestPostHandedFirstAfterAnswers: messages answered do not hold the
// inbox; a release, or a message posted undelivered, does until a check
// finds the inbox free again.
func TestPostHandedFirstAfterAnswers(t *testing.T) {
	f := newHandFirstFixture(t)
	ctx := context.Background()
	now := time.Now()
	answer := func(m *mcpgate.Message) {
		t.Helper()
		r := &mcpgate.Message{ChannelID: "ch-t", AgentID: "tide", Type: mcpgate.MessageReply, InReplyTo: m.ID, Sender: "agent:tide"}
		if err := f.s.PostMessage(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	m1, _, _, err := f.post(t, "", now)
	if err != nil {
		t.Fatal(err)
	}
	m2, _, handed, err := f.post(t, "", now)
	if err != nil || !handed {
		t.Fatalf("second post: handed first %v, %v", handed, err)
	}
	answer(m1)
	answer(m2)
	m3, _, handed, err := f.post(t, "", now.Add(1500*time.Millisecond))
	if err != nil || !handed {
		t.Fatalf("after the answers: handed first %v, %v; want handed first", handed, err)
	}
	if err := f.s.ReleaseMessages(ctx, "tide", map[string]time.Time{m3.ID: m3.CreatedAt}); err != nil {
		t.Fatal(err)
	}
	m4, delivered, handed, err := f.post(t, "", now.Add(1600*time.Millisecond))
	if err != nil || delivered || handed {
		t.Fatalf("after a release: delivered %v, handed first %v, %v; want neither", delivered, handed, err)
	}
	if _, err := f.s.ClaimMessages(ctx, "tide", "", now.Add(1700*time.Millisecond), time.Second, 10); err != nil {
		t.Fatal(err)
	}
	answer(m3)
	answer(m4)
	if _, delivered, handed, err = f.post(t, "", now.Add(1800*time.Millisecond)); err != nil || !delivered || handed {
		t.Fatalf("after the claim: delivered %v, handed first %v, %v; want delivered through the check", delivered, handed, err)
	}
	undelivered := &mcpgate.Message{ChannelID: "ch-t", AgentID: "tide", Type: mcpgate.MessageChat, Sender: "user:u", CreatedAt: now.Add(1900 * time.Millisecond)}
	if err := f.s.PostMessage(ctx, undelivered); err != nil {
		t.Fatal(err)
	}
	if _, delivered, handed, err = f.post(t, "", now.Add(2*time.Second)); err != nil || delivered || handed {
		t.Fatalf("after an undelivered message: delivered %v, handed first %v, %v; want neither", delivered, handed, err)
	}
}

// TestPostHandedFirstForgetsOnRollback: a transaction that rolls back
// makes the Store forget what it knew of its inboxes.
func TestPostHandedFirstForgetsOnRollback(t *testing.T) {
	f := newHandFirstFixture(t)
	now := time.Now()
	if _, _, _, err := f.post(t, "", now); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := f.s.Tx(context.Background(), func(mcpgate.Store) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, _, handed, err := f.post(t, "", now); err != nil || handed {
		t.Errorf("after a rollback: handed first %v, %v; want the check", handed, err)
	}
}
