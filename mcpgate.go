// Package mcpgate holds the domain of the gateway: users, agents, skills,
// tools, credentials, sessions and calls, the service interfaces that the
// stores and backends implement, and the error codes every edge maps to its
// own wire format.
//
// The package imports only the standard library. Implementations live in
// sub-packages, one per dependency or backend (sqlstore, sqlite, postgres,
// rest, mcp, ...), and only cmd/mcpgate wires them together.
package mcpgate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Version is the gateway's version, set at build time with
// -ldflags "-X github.com/mcpgate/mcpgate.Version=v1.2.3".
var Version = "0.1.0-dev"

// Commit is the source revision the binary was built from, set at build time.
var Commit = ""

// NewID returns a random identifier with the given prefix, such as "usr_" or
// "key_", followed by 24 hex digits (96 bits of entropy).
func NewID(prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + hex.EncodeToString(b[:])
}

// NewOrderedID returns an identifier like NewID's whose first 11 hex
// digits are the time in milliseconds (so the IDs made later sort after
// the earlier ones; within a millisecond, at random) and whose last 13 are
// random (52 bits). A row keyed by such an ID is inserted at the end of
// its index, where the rows inserted just before it are, instead of at a
// random place: a write transaction then changes fewer pages of it (as
// with NewCallID's audit rows). Messages are keyed so, and a final
// reply's unique index by the ID it answers.
func NewOrderedID(prefix string) string {
	return orderedID(prefix, uint64(time.Now().UnixMilli()))
}

// orderedID is NewOrderedID at the time ms, in milliseconds since 1970.
func orderedID(prefix string, ms uint64) string {
	var b [12]byte
	if _, err := rand.Read(b[5:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	for i := range 5 {
		b[i] = byte(ms >> (36 - 8*i))
	}
	b[5] = byte(ms<<4) | b[5]&0x0f
	return prefix + hex.EncodeToString(b[:])
}

// Sleep waits d, or until ctx ends; it reports whether the whole of d
// passed. Retry loops use it to back off without outliving their context.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
