package storetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func webhookTests() []test {
	return []test{
		{"CreateFindListDelete", testWebhookCRUD},
		{"EnqueueMatches", testWebhookEnqueue},
		{"ClaimOnce", testWebhookClaimOnce},
		{"FinishAndList", testWebhookFinish},
		{"StaleFinish", testWebhookStaleFinish},
		{"Redeliver", testWebhookRedeliver},
		{"DeleteBefore", testWebhookDeleteBefore},
	}
}

// mustWebhook stores a webhook of user for events.
func mustWebhook(tb testing.TB, s mcpgate.Store, user string, events ...string) *mcpgate.Webhook {
	tb.Helper()
	w := &mcpgate.Webhook{UserID: user, URL: "https://hooks.example/" + user, Events: events, SealedSecret: "sealed-" + user}
	must(tb, s.CreateWebhook(context.Background(), w))
	return w
}

// mustEnqueue stores an event of user and returns how many deliveries it
// made.
func mustEnqueue(tb testing.TB, s mcpgate.Store, user, typ string) (*mcpgate.Event, int) {
	tb.Helper()
	e := &mcpgate.Event{ID: mcpgate.NewID("evt_"), Type: typ, CreatedAt: time.Now(), UserID: user, AgentID: "a1", Data: json.RawMessage(`{}`)}
	n, err := s.EnqueueEvent(context.Background(), e, []byte(`{"id":"`+e.ID+`"}`), time.Now().Add(24*time.Hour))
	must(tb, err)
	return e, n
}

func testWebhookCRUD(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	w := mustWebhook(t, s, "u1", mcpgate.EventCallCompleted, mcpgate.EventCallFailed)
	mustStoredTime(t, "CreatedAt", w.CreatedAt)
	mustWebhook(t, s, "u2", mcpgate.EventCallFailed)
	got, err := s.FindWebhook(ctx, w.ID)
	must(t, err)
	mustEqual(t, "webhook", got, w)
	mine, err := s.ListWebhooks(ctx, "u1")
	must(t, err)
	mustEqual(t, "u1's webhooks", mine, []*mcpgate.Webhook{w})
	all, err := s.ListWebhooks(ctx, "")
	must(t, err)
	if len(all) != 2 {
		t.Fatalf("all webhooks: %d, want 2", len(all))
	}
	mustEnqueue(t, s, "u1", mcpgate.EventCallFailed)
	must(t, s.DeleteWebhook(ctx, w.ID))
	_, err = s.FindWebhook(ctx, w.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustCode(t, s.DeleteWebhook(ctx, w.ID), mcpgate.ENOTFOUND)
	if due, _ := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 10); len(due) != 0 {
		t.Errorf("a deleted webhook's delivery was claimed: %+v", due[0])
	}
}

func testWebhookEnqueue(t *testing.T, s mcpgate.Store) {
	calls := mustWebhook(t, s, "u1", mcpgate.EventCallCompleted)
	mustWebhook(t, s, "u1", mcpgate.EventApprovalRequested)
	mustWebhook(t, s, "u2", mcpgate.EventCallCompleted)
	e, n := mustEnqueue(t, s, "u1", mcpgate.EventCallCompleted)
	if n != 1 {
		t.Fatalf("deliveries = %d, want 1 (one webhook of u1 wants call.completed)", n)
	}
	if _, n := mustEnqueue(t, s, "u3", mcpgate.EventCallCompleted); n != 0 {
		t.Errorf("a user without webhooks got %d deliveries", n)
	}
	due, err := s.ClaimDeliveries(context.Background(), time.Now(), time.Minute, 10)
	must(t, err)
	if len(due) != 1 || due[0].WebhookID != calls.ID || due[0].EventID != e.ID || due[0].Attempts != 1 {
		t.Fatalf("claimed %+v", due)
	}
	d := due[0]
	if d.URL != calls.URL || d.SealedSecret != calls.SealedSecret || string(d.Body) != `{"id":"`+e.ID+`"}` || d.EventType != e.Type {
		t.Errorf("claimed delivery carries %q %q %q %q", d.URL, d.SealedSecret, d.Body, d.EventType)
	}
}

func testWebhookClaimOnce(t *testing.T, s mcpgate.Store) {
	mustWebhook(t, s, "u1", mcpgate.EventCallCompleted)
	for range 20 {
		mustEnqueue(t, s, "u1", mcpgate.EventCallCompleted)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10 {
				due, err := s.ClaimDeliveries(context.Background(), time.Now(), time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, d := range due {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 20 {
		t.Errorf("claimed %d distinct deliveries, want 20", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %s claimed %d times", id, n)
		}
	}
}

func testWebhookFinish(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	w := mustWebhook(t, s, "u1", mcpgate.EventCallCompleted)
	mustEnqueue(t, s, "u1", mcpgate.EventCallCompleted)
	d := mustClaimOne(t, s, time.Now())
	retry := time.Now().Add(-time.Second) // due again at once
	a1 := &mcpgate.WebhookAttempt{DeliveryID: d.ID, Attempt: 1, Time: time.Now(), Status: 500, LatencyMS: 3, Response: "boom"}
	must(t, s.FinishAttempt(ctx, a1, mcpgate.DeliveryOutcome{State: mcpgate.DeliveryPending, NextAt: retry}))
	d2 := mustClaimOne(t, s, time.Now())
	if d2.ID != d.ID || d2.Attempts != 2 {
		t.Fatalf("retry claimed %s attempt %d", d2.ID, d2.Attempts)
	}
	a2 := &mcpgate.WebhookAttempt{DeliveryID: d.ID, Attempt: 2, Time: time.Now(), Status: 204}
	must(t, s.FinishAttempt(ctx, a2, mcpgate.DeliveryOutcome{State: mcpgate.DeliverySucceeded, NextAt: time.Now()}))
	list, err := s.ListDeliveries(ctx, w.ID, 10)
	must(t, err)
	if len(list) != 1 || list[0].State != mcpgate.DeliverySucceeded || list[0].Attempts != 2 {
		t.Fatalf("deliveries: %+v", list)
	}
	a1.Time, a2.Time = a1.Time.Truncate(time.Microsecond).UTC(), a2.Time.Truncate(time.Microsecond).UTC()
	mustEqual(t, "log", list[0].Log, []*mcpgate.WebhookAttempt{a1, a2})
	if due, _ := s.ClaimDeliveries(ctx, time.Now().Add(time.Hour), time.Minute, 10); len(due) != 0 {
		t.Errorf("a succeeded delivery was claimed again")
	}
}

func testWebhookStaleFinish(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	w := mustWebhook(t, s, "u1", mcpgate.EventCallCompleted)
	mustEnqueue(t, s, "u1", mcpgate.EventCallCompleted)
	d := mustClaimOne(t, s, time.Now())
	// The lease passes: another replica claims it again.
	mustClaimOne(t, s, time.Now().Add(2*time.Minute))
	late := &mcpgate.WebhookAttempt{DeliveryID: d.ID, Attempt: 1, Time: time.Now(), Status: 204}
	must(t, s.FinishAttempt(ctx, late, mcpgate.DeliveryOutcome{State: mcpgate.DeliverySucceeded}))
	list, err := s.ListDeliveries(ctx, w.ID, 10)
	must(t, err)
	if list[0].State != mcpgate.DeliveryPending || len(list[0].Log) != 1 {
		t.Errorf("a late finish moved the reclaimed delivery: %+v", list[0])
	}
}

func testWebhookRedeliver(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	w := mustWebhook(t, s, "u1", mcpgate.EventCallCompleted)
	other := mustWebhook(t, s, "u1", mcpgate.EventApprovalDecided)
	e, _ := mustEnqueue(t, s, "u1", mcpgate.EventCallCompleted)
	d := mustClaimOne(t, s, time.Now())
	must(t, s.FinishAttempt(ctx, &mcpgate.WebhookAttempt{DeliveryID: d.ID, Attempt: 1, Time: time.Now(), Status: 200},
		mcpgate.DeliveryOutcome{State: mcpgate.DeliverySucceeded}))
	nd, err := s.Redeliver(ctx, w.ID, d.ID, time.Now(), time.Now().Add(time.Hour))
	must(t, err)
	if nd.ID == d.ID || nd.EventID != e.ID || nd.State != mcpgate.DeliveryPending {
		t.Fatalf("redelivery: %+v", nd)
	}
	again := mustClaimOne(t, s, time.Now())
	if again.ID != nd.ID || string(again.Body) != `{"id":"`+e.ID+`"}` {
		t.Errorf("claimed %+v after redeliver", again)
	}
	_, err = s.Redeliver(ctx, other.ID, d.ID, time.Now(), time.Now())
	mustCode(t, err, mcpgate.ENOTFOUND)
}

// mustClaimOne claims exactly one delivery at now.
func mustClaimOne(tb testing.TB, s mcpgate.Store, now time.Time) *mcpgate.DueDelivery {
	tb.Helper()
	due, err := s.ClaimDeliveries(context.Background(), now, time.Minute, 10)
	must(tb, err)
	if len(due) != 1 {
		tb.Fatalf("claimed %d deliveries, want 1", len(due))
	}
	return due[0]
}

func testWebhookDeleteBefore(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	w := mustWebhook(t, s, "u1", mcpgate.EventCallCompleted)
	mustEnqueue(t, s, "u1", mcpgate.EventCallCompleted)
	mustEnqueue(t, s, "u1", mcpgate.EventCallCompleted)
	due, err := s.ClaimDeliveries(ctx, time.Now(), time.Minute, 1)
	must(t, err)
	d := due[0]
	must(t, s.FinishAttempt(ctx, &mcpgate.WebhookAttempt{DeliveryID: d.ID, Attempt: 1, Time: time.Now(), Status: 200},
		mcpgate.DeliveryOutcome{State: mcpgate.DeliverySucceeded}))
	n, err := s.DeleteDeliveriesBefore(ctx, time.Now().Add(time.Minute), 10)
	must(t, err)
	list, err := s.ListDeliveries(ctx, w.ID, 10)
	must(t, err)
	if n != 1 || len(list) != 1 || list[0].ID == d.ID || list[0].State != mcpgate.DeliveryPending {
		t.Fatalf("deleted %d; left %+v, want only the pending delivery", n, list)
	}
	if _, err := s.Redeliver(ctx, w.ID, d.ID, time.Now(), time.Now()); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("redeliver of a swept delivery: %v", err)
	}
}
