package events

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestImports keeps the hub on the standard library and the root package.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate")
}

// notes is a SessionNotifier that writes down what it is given.
type notes []string

func (n *notes) NotifySession(id, method string, _ json.RawMessage) {
	*n = append(*n, "session "+id+" "+method)
}

func (n *notes) NotifyAgent(id, method string, _ json.RawMessage) {
	*n = append(*n, "agent "+id+" "+method)
}

func TestHubPassesEachEventToItsSubscribersInOrder(t *testing.T) {
	h := New()
	var got []string
	h.SessionClosed("before") // no subscriber yet: dropped
	h.OnSessionClosed(func(id string) { got = append(got, "1 closed "+id) })
	h.OnSessionClosed(func(id string) { got = append(got, "2 closed "+id) })
	h.OnSkillsLoaded(func(s []*mcpgate.Skill) { got = append(got, "loaded "+s[0].Name) })
	h.OnToolsChanged(func(ids []string) { got = append(got, "changed "+ids[0]) })
	h.OnSkillsStored(func(context.Context) { got = append(got, "stored") })
	var n notes
	h.OnNotify(&n)

	h.SessionClosed("s1")
	h.SkillsLoaded([]*mcpgate.Skill{{Name: "search"}})
	h.ToolsChanged([]string{"crm"})
	h.SkillsStored(t.Context())
	h.NotifySession("s2", "notifications/resources/updated", nil)
	h.NotifyAgent("crm", "notifications/prompts/list_changed", nil)

	want := []string{"1 closed s1", "2 closed s1", "loaded search", "changed crm", "stored"}
	if !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
	wantNotes := notes{"session s2 notifications/resources/updated", "agent crm notifications/prompts/list_changed"}
	if !slices.Equal(n, wantNotes) {
		t.Errorf("notifications = %q, want %q", n, wantNotes)
	}
}

func TestHubLetsASubscriberPublish(t *testing.T) {
	h := New()
	var stored int
	h.OnSkillsStored(func(context.Context) { stored++ })
	h.OnSkillsLoaded(func([]*mcpgate.Skill) { h.SkillsStored(context.Background()) })
	h.SkillsLoaded(nil)
	if stored != 1 {
		t.Errorf("SkillsStored from a SkillsLoaded subscriber reached %d subscribers, want 1", stored)
	}
}

func TestHubPublishesEvents(t *testing.T) {
	h := New()
	var got []string
	h.OnPublish(func(_ context.Context, e *mcpgate.Event) { got = append(got, "a "+e.Type) })
	h.OnPublish(func(_ context.Context, e *mcpgate.Event) { got = append(got, "b "+e.ID) })
	h.Publish(context.Background(), &mcpgate.Event{ID: "evt_1", Type: mcpgate.EventApprovalRequested})
	if want := []string{"a approval.requested", "b evt_1"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestHubWants(t *testing.T) {
	h := New()
	if h.Wants("u1", mcpgate.EventCallCompleted) {
		t.Error("a hub without subscribers wants an event")
	}
	var got []string
	h.OnPublishWanted(func(_ context.Context, e *mcpgate.Event) { got = append(got, e.Type) },
		func(user, typ string) bool { return user == "u1" && typ == mcpgate.EventCallFailed })
	if !h.Wants("u1", mcpgate.EventCallFailed) || h.Wants("u1", mcpgate.EventCallCompleted) || h.Wants("u2", mcpgate.EventCallFailed) {
		t.Error("the hub does not want what its subscriber wants")
	}
	h.Publish(context.Background(), &mcpgate.Event{Type: mcpgate.EventCallCompleted, UserID: "u2"})
	if want := []string{mcpgate.EventCallCompleted}; !slices.Equal(got, want) {
		t.Errorf("the subscriber was given %q, want %q (every event)", got, want)
	}
	h.OnPublish(func(context.Context, *mcpgate.Event) {})
	if !h.Wants("u2", mcpgate.EventCallCompleted) {
		t.Error("with a subscriber that wants every event, the hub does not want one")
	}
}
