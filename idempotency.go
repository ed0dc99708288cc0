package mcpgate

import (
	"context"
	"time"
)

// IdempotencyClaim is the row that binds an idempotency key, in the scope of
// one caller identity and one agent, to one call: claimed while the call
// runs, then holding its result until ExpiresAt.
type IdempotencyClaim struct {
	Identity string
	AgentID  string
	Key      string
	// Token identifies this claim of the key, so that a claim taken over
	// after it went stale can no longer be completed or released by the
	// call that made it.
	Token string
	// Hash binds the key to the tool and its canonical arguments.
	Hash string
	// Result is the stored result's JSON; nil while the call runs.
	Result    []byte
	ClaimedAt time.Time
	// StaleAt is when an unfinished claim counts as failed: its call's
	// deadline plus a grace period. A gateway killed mid-call leaves such
	// a claim, and a retry after StaleAt may run.
	StaleAt time.Time
	// ExpiresAt is when the row goes, finished or not.
	ExpiresAt time.Time
}

// Done reports whether the claim holds a result.
func (c *IdempotencyClaim) Done() bool { return c.Result != nil }

// IdempotencyStore keeps idempotency keys. Claims hold across replicas:
// each is one insert guarded by a unique index on (identity, agent, key).
type IdempotencyStore interface {
	// ClaimIdempotency claims c's key at now. It returns nil when the
	// caller holds the claim: the key was free, its row had expired, or it
	// was unfinished past StaleAt (then the row is replaced by c). Otherwise
	// it returns the row that holds the key, unchanged.
	ClaimIdempotency(ctx context.Context, c *IdempotencyClaim, now time.Time) (*IdempotencyClaim, error)
	// CompleteIdempotency stores the result of the claim with c's token.
	// Returns ENOTFOUND when that claim is gone or was taken over.
	CompleteIdempotency(ctx context.Context, c *IdempotencyClaim, result []byte) error
	// ReleaseIdempotency deletes the claim with c's token, if it is still
	// there, so that a retry may run.
	ReleaseIdempotency(ctx context.Context, c *IdempotencyClaim) error
	// FindIdempotency returns the row of a key; ENOTFOUND if none.
	FindIdempotency(ctx context.Context, identity, agentID, key string) (*IdempotencyClaim, error)
	// DeleteExpiredIdempotency deletes at most limit rows expired at now
	// and returns how many went.
	DeleteExpiredIdempotency(ctx context.Context, now time.Time, limit int) (int64, error)
}
