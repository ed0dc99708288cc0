package mcpgate

import (
	"context"
	"time"
)

// PresenceStore records which replicas have workers of an agent connected,
// so that every replica can tell whether the agent is online. A replica
// refreshes its records while the workers stay; records of a replica that
// died simply expire.
type PresenceStore interface {
	// PutPresence records that replica has workers of the agent's skill
	// (of all its skills when skill is "") connected until expires,
	// replacing the replica's earlier record. Returns ENOTFOUND if the agent
	// does not exist.
	PutPresence(ctx context.Context, agentID, skill, replica string, expires time.Time) error
	// DeletePresence removes replica's record of the agent's skill. Removing
	// a missing record is not an error.
	DeletePresence(ctx context.Context, agentID, skill, replica string) error
	// Present reports whether any replica has a record expiring after now
	// of workers that take the agent's skill: of that skill or of all
	// skills. With skill "", a record of any skill counts.
	Present(ctx context.Context, agentID, skill string, now time.Time) (bool, error)
}
