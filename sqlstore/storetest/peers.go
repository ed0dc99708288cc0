package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func peerTests() []test {
	return []test{
		{"ToAndAll", testPeerToAndAll},
		{"Since", testPeerSince},
		{"Delete", testPeerDelete},
	}
}

// putPeer stores a message from replica from to replica to.
func putPeer(t *testing.T, s mcpgate.Store, from, to, body string) *mcpgate.PeerMessage {
	t.Helper()
	m := &mcpgate.PeerMessage{From: from, To: to, Body: []byte(body)}
	if err := s.PutPeerMessage(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	if m.ID == "" || m.CreatedAt.IsZero() {
		t.Fatalf("PutPeerMessage left ID or CreatedAt unset: %+v", m)
	}
	return m
}

// peerBodies returns the bodies of the messages to replica to since.
func peerBodies(t *testing.T, s mcpgate.Store, to string, since time.Time) []string {
	t.Helper()
	msgs, err := s.PeerMessages(context.Background(), to, since)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Body))
	}
	return out
}

// testPeerToAndAll checks that a replica reads its own messages and those
// to every replica, oldest first, with the body as stored.
func testPeerToAndAll(t *testing.T, s mcpgate.Store) {
	start := time.Now().Add(-time.Second)
	putPeer(t, s, "a", "b", `{"k":"answer"}`)
	putPeer(t, s, "a", "", `{"k":"cancel"}`)
	putPeer(t, s, "b", "c", `{"k":"other"}`)
	mustEqual(t, "to b", peerBodies(t, s, "b", start), []string{`{"k":"answer"}`, `{"k":"cancel"}`})
	mustEqual(t, "to c", peerBodies(t, s, "c", start), []string{`{"k":"cancel"}`, `{"k":"other"}`})
	msgs, err := s.PeerMessages(context.Background(), "b", start)
	if err != nil || msgs[0].From != "a" || msgs[0].To != "b" {
		t.Errorf("first message to b: %+v %v", msgs, err)
	}
}

// testPeerSince checks that messages older than since are left out.
func testPeerSince(t *testing.T, s mcpgate.Store) {
	old := putPeer(t, s, "a", "b", "old")
	time.Sleep(2 * time.Millisecond) // created_at has microseconds: the next one is later
	fresh := putPeer(t, s, "a", "b", "fresh")
	if !fresh.CreatedAt.After(old.CreatedAt) {
		t.Fatalf("created %v then %v", old.CreatedAt, fresh.CreatedAt)
	}
	mustEqual(t, "since the second", peerBodies(t, s, "b", fresh.CreatedAt), []string{"fresh"})
}

// testPeerDelete checks that the sweep deletes by age only.
func testPeerDelete(t *testing.T, s mcpgate.Store) {
	old := putPeer(t, s, "a", "b", "old")
	time.Sleep(2 * time.Millisecond)
	putPeer(t, s, "a", "b", "fresh")
	n, err := s.DeletePeerMessages(context.Background(), old.CreatedAt.Add(time.Microsecond))
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	mustEqual(t, "left", peerBodies(t, s, "b", time.Time{}), []string{"fresh"})
}
