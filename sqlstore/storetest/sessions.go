package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func sessionTests() []test {
	return []test{
		{"CreateAndFind", testSessionCreateAndFind},
		{"CreateErrors", testSessionCreateErrors},
		{"Update", testSessionUpdate},
		{"End", testSessionEnd},
		{"DeleteEndedAndExpired", testSessionDelete},
	}
}

func testSessionCreateAndFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	zone := time.FixedZone("X", -5*3600)
	created := time.Date(2026, 3, 4, 5, 6, 7, 891234567, zone)
	ss := &mcpgate.Session{
		ID: "sess-1", AgentID: "weather", Identity: "key:key_1", ProtocolVersion: "2025-06-18",
		ClientName: "inspector", ClientVersion: "1.2.3",
		ClientCapabilities: json.RawMessage(`{"roots": {"listChanged": true}}`),
		LogLevel:           "debug",
		CreatedAt:          created,
		LastSeenAt:         created.Add(time.Minute),
	}
	must(t, s.CreateSession(ctx, ss))
	got, err := s.FindSession(ctx, "sess-1")
	must(t, err)
	mustEqual(t, "FindSession", got, ss)
	mustStoredPrecision(t, "CreatedAt", got.CreatedAt)
	mustStoredPrecision(t, "LastSeenAt", got.LastSeenAt)
	mustEqual(t, "CreatedAt", got.CreatedAt, created.Truncate(time.Microsecond))

	bare := mustSession(t, s, "sess-2", "weather")
	mustStoredTime(t, "CreatedAt", bare.CreatedAt)
	mustEqual(t, "LastSeenAt", bare.LastSeenAt, bare.CreatedAt)
	got, err = s.FindSession(ctx, "sess-2")
	must(t, err)
	mustEqual(t, "bare session", got, bare)

	_, err = s.FindSession(ctx, "sess-missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testSessionCreateErrors(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustSession(t, s, "sess-1", "weather")
	mustCode(t, s.CreateSession(ctx, &mcpgate.Session{ID: "sess-1", AgentID: "weather"}), mcpgate.ECONFLICT)
	mustCode(t, s.CreateSession(ctx, &mcpgate.Session{ID: "sess-2", AgentID: "missing"}), mcpgate.EINVALID)
	mustCode(t, s.CreateSession(ctx, &mcpgate.Session{AgentID: "weather"}), mcpgate.EINVALID)
}

func testSessionUpdate(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	ss := mustSession(t, s, "sess-1", "weather")
	must(t, s.SetSessionLogLevel(ctx, "sess-1", "warning"))
	seen := ss.LastSeenAt.Add(90 * time.Second)
	must(t, s.TouchSession(ctx, "sess-1", seen))
	got, err := s.FindSession(ctx, "sess-1")
	must(t, err)
	ss.LogLevel, ss.LastSeenAt = "warning", seen.UTC().Truncate(time.Microsecond)
	mustEqual(t, "updated session", got, ss)

	// A touch never undoes a log level set in between, as a whole-record
	// write from a stale copy would.
	must(t, s.SetSessionLogLevel(ctx, "sess-1", "error"))
	must(t, s.TouchSession(ctx, "sess-1", seen.Add(time.Minute)))
	got, err = s.FindSession(ctx, "sess-1")
	must(t, err)
	if got.LogLevel != "error" {
		t.Errorf("log level after a touch = %q, want error", got.LogLevel)
	}
	mustCode(t, s.SetSessionLogLevel(ctx, "sess-missing", "info"), mcpgate.ENOTFOUND)
	mustCode(t, s.TouchSession(ctx, "sess-missing", seen), mcpgate.ENOTFOUND)
}

func testSessionEnd(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	mustSession(t, s, "sess-1", "weather")
	at := time.Now().Add(time.Minute)
	must(t, s.EndSession(ctx, "sess-1", at))
	must(t, s.EndSession(ctx, "sess-1", at.Add(time.Hour)))
	got, err := s.FindSession(ctx, "sess-1")
	must(t, err)
	want := at.UTC().Truncate(time.Microsecond)
	if got.EndedAt == nil || !got.EndedAt.Equal(want) {
		t.Fatalf("EndedAt = %v, want %v", got.EndedAt, want)
	}
	mustCode(t, s.EndSession(ctx, "sess-missing", at), mcpgate.ENOTFOUND)
}

func testSessionDelete(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	cutoff := time.Now().Add(-time.Hour)
	for id, lastSeen := range map[string]time.Time{
		"expired": cutoff.Add(-time.Second),
		"ended":   cutoff.Add(time.Minute),
		"live":    cutoff.Add(time.Minute),
		"at":      cutoff,
	} {
		ss := &mcpgate.Session{ID: id, AgentID: "weather", CreatedAt: lastSeen, LastSeenAt: lastSeen}
		must(t, s.CreateSession(ctx, ss))
	}
	must(t, s.EndSession(ctx, "ended", time.Now()))
	n, err := s.DeleteSessions(ctx, cutoff)
	must(t, err)
	mustEqual(t, "deleted", n, 2)
	for id, code := range map[string]string{"expired": mcpgate.ENOTFOUND, "ended": mcpgate.ENOTFOUND, "live": "", "at": ""} {
		_, err := s.FindSession(ctx, id)
		mustCode(t, err, code)
	}
	n, err = s.DeleteSessions(ctx, cutoff)
	must(t, err)
	mustEqual(t, "deleted again", n, 0)
}
