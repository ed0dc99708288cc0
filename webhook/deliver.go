package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// DeliveryStore claims deliveries and logs their attempts
// (mcpgate.WebhookStore).
type DeliveryStore interface {
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*mcpgate.DueDelivery, error)
	FinishAttempt(ctx context.Context, a *mcpgate.WebhookAttempt, out mcpgate.DeliveryOutcome) error
}

// Opener opens sealed secrets (seal.Box).
type Opener interface {
	Open(sealed string) ([]byte, error)
}

// Defaults of a Deliverer.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultBackoff    = 10 * time.Second
	DefaultMaxBackoff = time.Hour
	DefaultWorkers    = 8
	DefaultPoll       = time.Second
	// ExcerptBytes is the most of a receiver's answer an attempt logs.
	ExcerptBytes = 1024
)

// DelivererOptions configure a Deliverer. Store, Secrets and Client are
// required.
type DelivererOptions struct {
	Store   DeliveryStore
	Secrets Opener
	// Client sends the requests; it should dial through the SSRF guard,
	// which checks every address at dial time. Its redirects are not
	// followed.
	Client *http.Client
	// Timeout bounds one attempt; default DefaultTimeout.
	Timeout time.Duration
	// Backoff is the wait before the first retry, doubled for each one
	// after up to MaxBackoff, with jitter: each wait is drawn between half
	// and the whole of its step. Defaults DefaultBackoff and
	// DefaultMaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Workers bounds the attempts in flight; default DefaultWorkers.
	Workers int
	// Poll is how often the outbox is read for due deliveries when nothing
	// woke the deliverer; default the smaller of DefaultPoll and Backoff.
	Poll     time.Duration
	Recorder Recorder // optional
	Logger   *slog.Logger
}

// Deliverer POSTs due deliveries, signed, and schedules their retries.
// Several replicas may run one each on a shared database: a delivery is
// claimed by one of them at a time.
type Deliverer struct {
	opts   DelivererOptions
	client *http.Client
	wake   chan struct{}
	slots  chan struct{}
}

// NewDeliverer returns a Deliverer; run Run in a goroutine.
func NewDeliverer(opts *DelivererOptions) *Deliverer {
	d := &Deliverer{opts: *opts, wake: make(chan struct{}, 1)}
	o := &d.opts
	o.Timeout = orDefault(o.Timeout, DefaultTimeout)
	o.Backoff = orDefault(o.Backoff, DefaultBackoff)
	o.MaxBackoff = max(orDefault(o.MaxBackoff, DefaultMaxBackoff), o.Backoff)
	o.Poll = orDefault(o.Poll, min(DefaultPoll, o.Backoff))
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := *o.Client
	c.Timeout = o.Timeout
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	d.client, d.slots = &c, make(chan struct{}, o.Workers)
	return d
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// Wake makes Run look for due deliveries now. It never blocks.
func (d *Deliverer) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight.
func (d *Deliverer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		if d.claim(ctx, &wg) {
			continue // a full batch: more may be due
		}
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-time.After(d.opts.Poll):
		}
	}
}

// claim starts an attempt for each due delivery, as many as there are
// free workers, and reports whether it filled them all.
func (d *Deliverer) claim(ctx context.Context, wg *sync.WaitGroup) bool {
	free := cap(d.slots) - len(d.slots)
	if free == 0 {
		return false
	}
	due, err := d.opts.Store.ClaimDeliveries(ctx, time.Now(), d.opts.Timeout+30*time.Second, free)
	if err != nil {
		if ctx.Err() == nil {
			d.opts.Logger.Warn("webhook deliveries not claimed", "err", err)
		}
		return false
	}
	for _, dd := range due {
		d.slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-d.slots; d.Wake() }()
			d.attempt(ctx, dd)
		})
	}
	return len(due) == free
}

// attempt makes one attempt at a delivery and records it.
func (d *Deliverer) attempt(ctx context.Context, dd *mcpgate.DueDelivery) {
	start := time.Now()
	a := &mcpgate.WebhookAttempt{DeliveryID: dd.ID, Attempt: dd.Attempts, Time: start}
	secret, err := d.opts.Secrets.Open(dd.SealedSecret)
	if err == nil {
		a.Status, a.Response, err = d.post(ctx, dd, secret)
	}
	if ctx.Err() != nil {
		return // shutting down: the lease lapses and another attempt follows
	}
	a.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		a.Error = cleanError(err)
	}
	out := d.outcome(dd, a.Status, time.Now())
	d.observe(out, a, time.Since(start))
	if err := d.opts.Store.FinishAttempt(ctx, a, out); err != nil {
		d.opts.Logger.Warn("webhook attempt not recorded", "delivery", dd.ID, "err", err)
	}
}

// post sends the delivery's body, signed now, and returns the status and
// the start of the answer.
func (d *Deliverer) post(ctx context.Context, dd *mcpgate.DueDelivery, secret []byte) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dd.URL, bytes.NewReader(dd.Body))
	if err != nil {
		return 0, "", err
	}
	now := time.Now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mcpgate-webhooks/"+mcpgate.Version)
	req.Header.Set(HeaderID, dd.EventID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(secret, now, dd.Body))
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, ExcerptBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	return resp.StatusCode, excerpt(b), nil
}

// excerpt makes a response's start storable as text.
func excerpt(b []byte) string {
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "")
}

// cleanError is an attempt's error without the URL, whose query may hold
// secrets.
func cleanError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// outcome is where a delivery goes after an attempt that got status (0:
// none): done on 2xx, else retried after a backoff, or failed when that
// would pass its GiveUpAt.
func (d *Deliverer) outcome(dd *mcpgate.DueDelivery, status int, now time.Time) mcpgate.DeliveryOutcome {
	if status >= 200 && status < 300 {
		return mcpgate.DeliveryOutcome{State: mcpgate.DeliverySucceeded, NextAt: now}
	}
	next := now.Add(Backoff(dd.Attempts, d.opts.Backoff, d.opts.MaxBackoff, rand.Float64))
	if next.After(dd.GiveUpAt) {
		return mcpgate.DeliveryOutcome{State: mcpgate.DeliveryFailed, NextAt: now}
	}
	return mcpgate.DeliveryOutcome{State: mcpgate.DeliveryPending, NextAt: next}
}

// observe counts the attempt and logs a failed one.
func (d *Deliverer) observe(out mcpgate.DeliveryOutcome, a *mcpgate.WebhookAttempt, took time.Duration) {
	result := "retry"
	switch out.State {
	case mcpgate.DeliverySucceeded:
		result = "success"
	case mcpgate.DeliveryFailed:
		result = "failed"
	}
	if d.opts.Recorder != nil {
		d.opts.Recorder.ObserveWebhookAttempt(result, took)
	}
	if out.State != mcpgate.DeliverySucceeded {
		d.opts.Logger.Info("webhook attempt failed", "delivery", a.DeliveryID, "attempt", a.Attempt, "status", a.Status, "err", a.Error, "outcome", result)
	}
}
