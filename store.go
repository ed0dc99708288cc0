package mcpgate

import "context"

// Store is everything the gateway keeps in its database. The sqlite and
// postgres packages implement it with the same contract, which one test
// suite (sqlstore/storetest) checks on both.
type Store interface {
	UserStore
	AgentStore
	SkillStore
	KeyStore
	SessionStore
	OAuthStore
	MessageStore
	PresenceStore
	SkillHealthStore
	RateBucketStore
	CallStore
	IdempotencyStore
	ApprovalStore
	FileStore
	WebhookStore
	TaskStore
	PeerMessageStore
	StreamEventStore
	SettingStore

	// Tx runs fn with a Store whose changes are committed together when fn
	// returns nil and rolled back when it returns an error.
	Tx(ctx context.Context, fn func(tx Store) error) error
	// Generation returns a number that grows whenever an agent, skill or
	// tool changes, so that caches of them know when to reload.
	Generation(ctx context.Context) (int64, error)
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}
