package sqlstore

import (
	"database/sql/driver"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

// TestSetCallRow checks that the values setCallRow leaves for each row of
// a batch, reused from the row before or not, are callArgs' values with
// empty texts as NULL.
func TestSetCallRow(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	full := func(i int) *mcpgate.CallRecord {
		return &mcpgate.CallRecord{ID: mcpgate.NewCallID(at), Time: at.Add(time.Duration(i) * time.Millisecond),
			CredentialKind: mcpgate.CredentialUserKey, CredentialID: "key_1", UserID: "usr_1", AgentID: "a1", Skill: "s", Tool: "t",
			ArgsHash: "h", Arguments: json.RawMessage(`{"a":1}`), Outcome: mcpgate.OutcomeOK, Duration: time.Duration(i) * time.Millisecond,
			ResultBytes: i, SessionID: "sess", IdempotencyKey: "k", Error: "e"}
	}
	sparse := &mcpgate.CallRecord{Time: at, AgentID: "a2", Tool: "t", Outcome: mcpgate.OutcomeTimeout} // ID made, the rest empty
	batch := []*mcpgate.CallRecord{full(1), full(2), sparse, full(3), {AgentID: "a1"}, full(4)}
	values := make([]driver.NamedValue, callColumnCount)
	for n, c := range batch {
		setCallRow(values, c)
		for i, want := range callArgs(c) {
			if want == "" {
				want = nil
			}
			if got := values[i].Value; got != want {
				t.Errorf("row %d, column %d: %#v, want %#v", n, i, got, want)
			}
		}
	}
}
