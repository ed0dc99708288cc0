package webhook_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/mcpgate/mcpgate/webhook"
)

// countingStore counts the events that reach the database.
type countingStore struct {
	*sqlstore.Store
	enqueued atomic.Int32
}

func (c *countingStore) EnqueueEvent(ctx context.Context, e *mcpgate.Event, body []byte, giveUpAt time.Time) (int, error) {
	c.enqueued.Add(1)
	return c.Store.EnqueueEvent(ctx, e, body, giveUpAt)
}

// An event nobody's webhook wants never reaches the database; one made
// later is delivered once the service tells the outbox of the change.
func TestOutboxSkipsEventsNobodyWants(t *testing.T) {
	s := newStack(t, time.Hour)
	ctx := context.Background()
	u := &mcpgate.User{Name: "ann", Source: mcpgate.SourceCLI}
	if err := s.store.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: s.store}
	o := webhook.NewOutbox(&webhook.OutboxOptions{Store: st, Webhooks: st, Wake: s.deliverer.Wake})
	go o.Run(t.Context())
	o.Refresh(ctx)
	svc := webhook.NewService(&webhook.ServiceOptions{Store: s.store, Sealer: s.box, Policy: s.policy(), Changed: o.Refresh})
	if !o.Wants("", mcpgate.EventCallCompleted) {
		t.Error("the outbox does not want an event whose owner it does not know yet")
	}
	if o.Wants(u.ID, mcpgate.EventCallCompleted) {
		t.Error("the outbox wants an event no webhook wants")
	}
	o.Publish(ctx, &mcpgate.Event{Type: mcpgate.EventCallCompleted, UserID: u.ID, Data: []byte(`{}`)})
	r, srv := newReceiver(t, 200)
	w, secret, err := svc.Create(ctx, u.ID, srv.URL, []string{mcpgate.EventCallFailed}, "")
	if err != nil {
		t.Fatal(err)
	}
	r.secret = []byte(secret)
	if !o.Wants(u.ID, mcpgate.EventCallFailed) || o.Wants(u.ID, mcpgate.EventCallCompleted) {
		t.Error("after the webhook is made, the outbox wants other events than those of its type")
	}
	o.Publish(ctx, &mcpgate.Event{Type: mcpgate.EventCallCompleted, UserID: u.ID, Data: []byte(`{}`)}) // not its type
	o.Publish(ctx, &mcpgate.Event{Type: mcpgate.EventCallFailed, UserID: u.ID, Data: []byte(`{}`)})
	waitDeliveries(t, s, w.ID, 1)
	if n := st.enqueued.Load(); n != 1 {
		t.Errorf("%d events reached the database, want the one a webhook wants", n)
	}
}
