package mcpgate

import (
	"context"
	"time"
)

// A StreamEvent is one SSE event a replica sent on a stream of a session,
// written to the database behind the send so that a client can resume the
// stream (GET with Last-Event-ID) on another replica after this one died
// without handing its streams over.
type StreamEvent struct {
	// Replica is the sending replica's instance and Pos the event's place
	// among all the events it stored: together they are the event's key.
	Replica string
	Pos     int64
	Session string
	Stream  string
	Seq     uint64
	// Get is true for a session's GET stream, false for a call's reply.
	Get bool
	// Wire is the event as sent, id line included.
	Wire      []byte
	CreatedAt time.Time
}

// A StreamFloor says that Replica keeps only its events of Session from
// position Pos on: the store may forget the earlier ones, as the replica's
// memory did.
type StreamFloor struct {
	Replica, Session string
	Pos              int64
}

// StreamEventStore keeps the recent SSE events of every replica's streams,
// for resumptions whose stream's replica is gone.
type StreamEventStore interface {
	// PutStreamEvents stores events, setting their CreatedAt, and deletes
	// for each floor the events of its replica and session before it, all
	// in one transaction.
	PutStreamEvents(ctx context.Context, events []*StreamEvent, floors []StreamFloor) error
	// StreamEvents returns the stored events of the stream of session
	// whose sequence number is at least from, in order.
	StreamEvents(ctx context.Context, session, stream string, from uint64) ([]*StreamEvent, error)
	// DeleteStreamEvents deletes the events created before before and
	// returns how many it deleted.
	DeleteStreamEvents(ctx context.Context, before time.Time) (int64, error)
}
