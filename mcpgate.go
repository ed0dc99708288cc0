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
	"encoding/binary"
	"encoding/hex"
	"strings"
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

// NewOrderedID returns an identifier like NewID's made at t: the prefix,
// then 24 hex digits of 7 bytes of t in Unix microseconds and 5 random
// bytes. IDs made later sort after the earlier ones (within a microsecond,
// at random), so a row keyed by one is inserted at the end of its index,
// where the rows inserted just before it are, instead of at a random
// place: a write transaction then changes a few pages of the index rather
// than one a row, scattered over a large table. Audit rows (NewCallID) and
// messages are keyed so, and a final reply's unique index by the ID it
// answers.
func NewOrderedID(prefix string, t time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMicro())<<8)
	if _, err := rand.Read(b[7:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	var digits [2 * len(b)]byte
	hex.Encode(digits[:], b[:])
	var id strings.Builder
	id.Grow(len(prefix) + len(digits))
	id.WriteString(prefix)
	id.Write(digits[:])
	return id.String() // one allocation: the pipeline makes one a call
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
