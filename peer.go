package mcpgate

import (
	"context"
	"time"
)

// A PeerMessage is what one replica's MCP transport tells another's, through
// the database, about state that lives in one replica's memory: a client's
// answer to a server→client request, a cancellation, a notification for a
// session whose stream is held elsewhere, a resumed stream's events. The
// database keeps it, so a message sent while its receiver's listening
// connection was down is still found; a signal on the bus only says when to
// look.
type PeerMessage struct {
	ID string `json:"id"`
	// From is the sending replica's instance, To the receiving one's, or ""
	// for every replica.
	From string `json:"from"`
	To   string `json:"to"`
	// Body is the transport's message, opaque to the store.
	Body      []byte    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
}

// PeerMessageStore keeps the messages between replicas for a short while:
// they are read within seconds and deleted by age.
type PeerMessageStore interface {
	// PutPeerMessage stores m, setting its ID and CreatedAt.
	PutPeerMessage(ctx context.Context, m *PeerMessage) error
	// PeerMessages returns the messages to replica to and to every replica
	// created at or after since, oldest first.
	PeerMessages(ctx context.Context, to string, since time.Time) ([]*PeerMessage, error)
	// DeletePeerMessages deletes the messages created before before and
	// returns how many it deleted.
	DeletePeerMessages(ctx context.Context, before time.Time) (int64, error)
}
