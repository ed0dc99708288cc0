package mcpgate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func TestMessageStamp(t *testing.T) {
	var m mcpgate.Message
	before := time.Now().Truncate(time.Microsecond)
	m.Stamp()
	if m.CreatedAt.Before(before) || m.CreatedAt.Location() != time.UTC || m.CreatedAt.Nanosecond()%1000 != 0 {
		t.Errorf("CreatedAt = %v, want now, UTC, in whole microseconds", m.CreatedAt)
	}
	if !strings.HasPrefix(m.ID, "msg_") {
		t.Errorf("ID = %q, want msg_…", m.ID)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("X", 3600))
	kept := mcpgate.Message{ID: "msg_given", CreatedAt: at}
	kept.Stamp()
	if kept.ID != "msg_given" || !kept.CreatedAt.Equal(at.Truncate(time.Microsecond)) || kept.CreatedAt.Location() != time.UTC {
		t.Errorf("Stamp of a stamped message = %q at %v, want msg_given at %v in UTC", kept.ID, kept.CreatedAt, at.Truncate(time.Microsecond))
	}
}
