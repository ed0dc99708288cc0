package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/deptest"
	"github.com/mcpgate/mcpgate/netguard"
	"github.com/mcpgate/mcpgate/seal"
	"github.com/mcpgate/mcpgate/sqlite"
	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/mcpgate/mcpgate/webhook"
)

// TestImports keeps the package on the root and the SSRF guard.
func TestImports(t *testing.T) {
	deptest.Check(t, "github.com/mcpgate/mcpgate", "github.com/mcpgate/mcpgate/netguard")
}

// stack is a store, a sealer, and the three parts over them.
type stack struct {
	store     *sqlstore.Store
	box       *seal.Box
	svc       *webhook.Service
	outbox    *webhook.Outbox
	deliverer *webhook.Deliverer
}

// newStack opens a SQLite store and starts an outbox and a deliverer with
// short backoffs, private addresses allowed.
func newStack(t *testing.T, retryFor time.Duration) *stack {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	box, _ := seal.New(bytes.Repeat([]byte{1}, seal.KeySize))
	policy := netguard.Policy{AllowPrivate: true}
	s := &stack{store: st, box: box}
	s.deliverer = webhook.NewDeliverer(&webhook.DelivererOptions{Store: st, Secrets: box,
		Client: netguard.New(nil).Client(policy), Backoff: 20 * time.Millisecond, Timeout: 5 * time.Second})
	s.outbox = webhook.NewOutbox(&webhook.OutboxOptions{Store: st, RetryFor: retryFor, Wake: s.deliverer.Wake})
	s.svc = webhook.NewService(&webhook.ServiceOptions{Store: st, Sealer: box, Policy: policy, Wake: s.deliverer.Wake})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.outbox.Run(ctx) })
	wg.Go(func() { s.deliverer.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

// policy is the SSRF policy of the stack's service: private addresses
// allowed, for receivers on 127.0.0.1.
func (s *stack) policy() netguard.Policy { return netguard.Policy{AllowPrivate: true} }

// receiver is a webhook receiver that answers each request with the next
// of its statuses (the last one repeating) and checks every signature.
type receiver struct {
	t        *testing.T
	secret   []byte
	mu       sync.Mutex
	statuses []int
	got      []string // event IDs, one per request
	bodies   chan []byte
}

func newReceiver(t *testing.T, statuses ...int) (*receiver, *httptest.Server) {
	r := &receiver{t: t, statuses: statuses, bodies: make(chan []byte, 16)}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	if err := webhook.Verify(r.secret, req.Header, body, time.Now(), 0); err != nil {
		r.t.Errorf("delivery %d: %v", len(r.got)+1, err)
	}
	r.got = append(r.got, req.Header.Get(webhook.HeaderID))
	status := r.statuses[min(len(r.got), len(r.statuses))-1]
	r.mu.Unlock()
	w.WriteHeader(status)
	w.Write([]byte("attempt answered"))
	r.bodies <- body
}

// waitDeliveries waits until the webhook's newest delivery is no longer
// pending and returns the deliveries.
func waitDeliveries(t *testing.T, s *stack, id string, n int) []*mcpgate.WebhookDelivery {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		list, err := s.svc.Deliveries(context.Background(), id, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == n && list[0].State != mcpgate.DeliveryPending {
			return list
		}
	}
	t.Fatalf("the deliveries of %s did not finish", id)
	return nil
}

func TestDeliveryRetriesUntilTheReceiverTakesIt(t *testing.T) {
	s := newStack(t, time.Hour)
	r, srv := newReceiver(t, 500, 500, 200)
	w, secret, err := s.svc.Create(context.Background(), "u1", srv.URL+"/hook", []string{mcpgate.EventCallCompleted}, "")
	if err != nil {
		t.Fatal(err)
	}
	r.secret = []byte(secret)
	s.outbox.Publish(context.Background(), &mcpgate.Event{Type: mcpgate.EventCallCompleted, UserID: "u1", Data: json.RawMessage(`{"call_id":"call_1"}`)})
	s.outbox.Publish(context.Background(), &mcpgate.Event{Type: mcpgate.EventCallFailed, UserID: "u1", Data: json.RawMessage(`{}`)})
	list := waitDeliveries(t, s, w.ID, 1)
	d := list[0]
	if d.State != mcpgate.DeliverySucceeded || len(d.Log) != 3 {
		t.Fatalf("delivery %+v", d)
	}
	for i, want := range []int{500, 500, 200} {
		if a := d.Log[i]; a.Status != want || a.Attempt != i+1 || a.Response != "attempt answered" {
			t.Errorf("attempt %d: %+v, want status %d", i+1, a, want)
		}
	}
	var body struct {
		ID, Type string
		Data     map[string]string
	}
	json.Unmarshal(<-r.bodies, &body)
	if body.ID != d.EventID || body.Type != mcpgate.EventCallCompleted || body.Data["call_id"] != "call_1" {
		t.Errorf("body %+v", body)
	}

	nd, err := s.svc.Redeliver(context.Background(), w.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	list = waitDeliveries(t, s, w.ID, 2)
	if list[0].ID != nd.ID || list[0].State != mcpgate.DeliverySucceeded {
		t.Errorf("redelivery: %+v", list[0])
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != 4 || r.got[3] != d.EventID {
		t.Errorf("receiver saw events %v, want the first one 4 times", r.got)
	}
}

func TestDeliveryGivesUp(t *testing.T) {
	s := newStack(t, 50*time.Millisecond)
	r, srv := newReceiver(t, 503)
	w, secret, err := s.svc.Create(context.Background(), "u1", srv.URL, []string{mcpgate.EventTaskFailed}, "a-secret-of-my-own")
	if err != nil || secret != "a-secret-of-my-own" {
		t.Fatalf("Create = %q, %v", secret, err)
	}
	r.secret = []byte(secret)
	s.outbox.Publish(context.Background(), &mcpgate.Event{Type: mcpgate.EventTaskFailed, UserID: "u1", Data: json.RawMessage(`{}`)})
	d := waitDeliveries(t, s, w.ID, 1)[0]
	if d.State != mcpgate.DeliveryFailed || len(d.Log) == 0 {
		t.Errorf("delivery %+v, want failed", d)
	}
}

func TestCreateChecksTheWebhook(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	box, _ := seal.New(bytes.Repeat([]byte{1}, seal.KeySize))
	svc := webhook.NewService(&webhook.ServiceOptions{Store: st, Sealer: box})
	ctx := context.Background()
	for _, tc := range []struct{ url, event, secret string }{
		{"http://127.0.0.1:9/hook", mcpgate.EventCallCompleted, ""},
		{"http://169.254.169.254/latest", mcpgate.EventCallCompleted, ""},
		{"http://localhost/hook", mcpgate.EventCallCompleted, ""},
		{"ftp://203.0.113.9/hook", mcpgate.EventCallCompleted, ""},
		{"https://203.0.113.9/hook", "call.exploded", ""},
		{"https://203.0.113.9/hook", mcpgate.EventCallCompleted, "short"},
	} {
		if _, _, err := svc.Create(ctx, "u1", tc.url, []string{tc.event}, tc.secret); mcpgate.ErrorCode(err) != mcpgate.EINVALID {
			t.Errorf("Create(%q, %q, %q) = %v, want EINVALID", tc.url, tc.event, tc.secret, err)
		}
	}
	w, secret, err := svc.Create(ctx, "u1", "https://203.0.113.9/hook", []string{mcpgate.EventCallFailed, mcpgate.EventCallFailed}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) != len("whsec_")+43 || len(w.Events) != 1 {
		t.Errorf("secret %q, events %v", secret, w.Events)
	}
	if plain, err := box.Open(w.SealedSecret); err != nil || string(plain) != secret {
		t.Errorf("the stored secret opens to %q, %v", plain, err)
	}
}

func TestPublishNeverBlocks(t *testing.T) {
	o := webhook.NewOutbox(&webhook.OutboxOptions{Store: nil, QueueSize: 1})
	for range 3 {
		o.Publish(context.Background(), &mcpgate.Event{Type: mcpgate.EventCallCompleted})
	}
	if o.Dropped() != 2 {
		t.Errorf("dropped %d, want 2", o.Dropped())
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		attempt  int
		lo, high time.Duration
	}{{1, 5 * time.Second, 10 * time.Second}, {2, 10 * time.Second, 20 * time.Second}, {3, 20 * time.Second, 40 * time.Second}, {20, 30 * time.Minute, time.Hour}, {1000, 30 * time.Minute, time.Hour}} {
		lo := webhook.Backoff(tc.attempt, 10*time.Second, time.Hour, func() float64 { return 0 })
		hi := webhook.Backoff(tc.attempt, 10*time.Second, time.Hour, func() float64 { return 0.999999 })
		if lo != tc.lo || hi > tc.high || hi < tc.high-tc.high/1000 {
			t.Errorf("attempt %d: backoff in [%v, %v], want [%v, %v]", tc.attempt, lo, hi, tc.lo, tc.high)
		}
	}
}

func TestApprovalEventsReachTheAgentsOwner(t *testing.T) {
	s := newStack(t, time.Hour)
	ctx := context.Background()
	u := &mcpgate.User{Name: "ann", Source: mcpgate.SourceCLI}
	if err := s.store.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.store.CreateAgent(ctx, &mcpgate.Agent{ID: "crm", Name: "CRM", OwnerID: u.ID, Source: mcpgate.SourceCLI}); err != nil {
		t.Fatal(err)
	}
	owned := webhook.NewOutbox(&webhook.OutboxOptions{Store: s.store, Owners: s.store, Wake: s.deliverer.Wake})
	go owned.Run(t.Context())
	r, srv := newReceiver(t, 200)
	w, secret, err := s.svc.Create(ctx, u.ID, srv.URL, []string{mcpgate.EventApprovalDecided}, "")
	if err != nil {
		t.Fatal(err)
	}
	r.secret = []byte(secret)
	a := &mcpgate.Approval{ID: "apr_1", AgentID: "crm", Skill: "s", Tool: "t", Arguments: json.RawMessage(`{"token":"sk-1"}`),
		State: mcpgate.ApprovalRejected, Reviewer: "bob", Reason: "no"}
	owned.Publish(ctx, webhook.ApprovalEvent(mcpgate.EventApprovalDecided, a))
	waitDeliveries(t, s, w.ID, 1)
	body := string(<-r.bodies)
	for _, want := range []string{`"type":"approval.decided"`, `"approval_id":"apr_1"`, `"state":"rejected"`, `"reviewer":"bob"`} {
		if !strings.Contains(body, want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	if strings.Contains(body, "sk-1") {
		t.Errorf("body %s carries the arguments", body)
	}
}

// TestSlowReceiverTimesOut checks that an attempt at a receiver that never
// answers ends at the deliverer's timeout, logged without a status.
func TestSlowReceiverTimesOut(t *testing.T) {
	s := newStack(t, time.Hour)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	quick := webhook.NewDeliverer(&webhook.DelivererOptions{Store: s.store, Secrets: s.box,
		Client: netguard.New(nil).Client(netguard.Policy{AllowPrivate: true}), Timeout: 100 * time.Millisecond, Backoff: time.Hour})
	w, _, err := s.svc.Create(context.Background(), "u1", srv.URL, []string{mcpgate.EventCallFailed}, "")
	if err != nil {
		t.Fatal(err)
	}
	e := &mcpgate.Event{ID: "evt_slow", Type: mcpgate.EventCallFailed, CreatedAt: time.Now(), UserID: "u1", Data: json.RawMessage(`{}`)}
	if _, err := s.store.EnqueueEvent(context.Background(), e, []byte(`{}`), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	go quick.Run(t.Context())
	for {
		list, err := s.svc.Deliveries(context.Background(), w.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 && len(list[0].Log) == 1 {
			if a := list[0].Log[0]; a.Status != 0 || a.Error == "" || strings.Contains(a.Error, srv.URL) {
				t.Errorf("attempt %+v: want no status and an error without the URL", a)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
