package agentkit

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/h1"
)

// Options configure a worker. The zero value of each field but URL and
// Key means its default.
type Options struct {
	// URL is the gateway's base URL, like "http://127.0.0.1:8094".
	URL string
	// Key is the agent's API key ("bak_…").
	Key string
	// Skill, when set, takes only the messages of that skill; else the
	// worker takes every skill's of the agent.
	Skill string
	// Concurrency is how many handlers run at once (default 8).
	Concurrency int
	// MinBackoff and MaxBackoff bound the wait before reconnecting after
	// the inbox stream broke (default 250ms and 30s); the wait doubles on
	// each failed attempt and resets once a stream is open.
	MinBackoff, MaxBackoff time.Duration
	// IdleTimeout drops a stream on which nothing, not even a ping, came
	// for this long (default 45s; the gateway pings every 15s).
	IdleTimeout time.Duration
	// PushWait is how long a push receiver waits for the handler's reply
	// before it answers 202 and posts the reply later (default 10s). It
	// waits for the handler however long it takes when URL is empty.
	PushWait time.Duration
	// HTTPClient makes the requests (default: a client without timeout,
	// since the inbox stream lasts, that keeps a connection open for each
	// of the Concurrency handlers posting at once, so that their replies
	// do not each open a new one).
	HTTPClient *http.Client
	// Logger reports connections and failures (default slog.Default()).
	Logger *slog.Logger
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	o.URL = strings.TrimRight(o.URL, "/")
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(30*time.Second, o.MinBackoff)
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 45 * time.Second
	}
	if o.PushWait <= 0 {
		o.PushWait = 10 * time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: transport(o.URL, o.Concurrency)}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// transport is http.DefaultTransport keeping up to conns idle connections
// to the gateway, where the default keeps two: with more handlers than
// that replying at once, every reply past the second opened (and the
// gateway accepted) a connection of its own. A gateway at a plain http://
// base reached without a proxy is called over h1 instead, which writes
// each request and reads its response on the calling goroutine where
// net/http hands both to goroutines of the connection (two hand-offs a
// reply); HTTPS and proxied gateways keep net/http.
func transport(base string, conns int) http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = conns
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" {
		return t
	}
	if proxy, err := t.Proxy(&http.Request{URL: u}); err != nil || proxy != nil {
		return t
	}
	return &h1.Transport{Dial: t.DialContext, Next: t, MaxIdlePerHost: conns}
}

// Worker answers an agent's chat messages with a handler, pulled from
// the inbox stream (Run) or pushed by the gateway (PushHandler).
type Worker struct {
	opts    Options
	api     *client
	handler HandlerFunc
	slots   chan struct{} // one token per running handler
	seen    *ledger
	wg      sync.WaitGroup
}

// New returns a worker; set its handler with Handle before Run.
func New(opts Options) *Worker {
	opts = opts.withDefaults()
	return &Worker{
		opts:  opts,
		api:   &client{base: opts.URL, key: opts.Key, hc: opts.HTTPClient},
		slots: make(chan struct{}, opts.Concurrency),
		seen:  newLedger(4096),
	}
}

// Handle sets the function that answers each chat message.
func (w *Worker) Handle(h HandlerFunc) { w.handler = h }

// errNoHandler is returned by Run without a handler.
var errNoHandler = errors.New("agentkit: no handler: call Worker.Handle before Run")

// Run holds the inbox stream and answers messages until ctx is done,
// reconnecting with backoff whenever the stream breaks. It returns nil
// once ctx is done and the running handlers returned, and an error at
// once when the gateway refuses the key (a *StatusError).
func (w *Worker) Run(ctx context.Context) error {
	if w.handler == nil {
		return errNoHandler
	}
	defer w.wg.Wait()
	var lastSeq int64
	wait := w.opts.MinBackoff
	for {
		opened, err := w.stream(ctx, &lastSeq)
		if ctx.Err() != nil {
			return nil
		}
		var se *StatusError
		if errors.As(err, &se) && se.permanent() {
			return err
		}
		if opened {
			wait = w.opts.MinBackoff
		}
		w.opts.Logger.Warn("agentkit: inbox stream ended", "err", err, "retry_in", wait)
		if !mcpgate.Sleep(ctx, wait) {
			return nil
		}
		wait = min(2*wait, w.opts.MaxBackoff)
	}
}

// stream reads one inbox stream until it breaks; opened says whether the
// gateway accepted it. Handlers it starts run under ctx, so they outlive
// the stream but not Run.
func (w *Worker) stream(ctx context.Context, lastSeq *int64) (opened bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := w.api.openInbox(sctx, w.opts.Skill, *lastSeq)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	w.opts.Logger.Info("agentkit: inbox connected", "url", w.opts.URL, "after", *lastSeq)
	idle := time.AfterFunc(w.opts.IdleTimeout, cancel)
	defer idle.Stop()
	err = readEvents(resp.Body, func(ev event) {
		idle.Reset(w.opts.IdleTimeout)
		if ev.data != "" {
			w.receive(ctx, ev, lastSeq)
		}
	})
	if err == nil {
		err = errors.New("the gateway closed the stream")
	}
	return true, err
}

// receive handles one event of the stream.
func (w *Worker) receive(ctx context.Context, ev event, lastSeq *int64) {
	m, err := ev.message()
	if err != nil {
		w.opts.Logger.Warn("agentkit: bad inbox event", "id", ev.id, "err", err)
		return
	}
	*lastSeq = max(*lastSeq, m.Seq, ev.seq())
	switch m.Type {
	case mcpgate.MessageChat:
		w.pull(ctx, m)
	case mcpgate.MessageCancel:
		w.seen.cancel(m.InReplyTo)
		w.ack(ctx, m.ID)
	default:
		w.ack(ctx, m.ID)
	}
}

// ack acknowledges messages, logging a failure (the gateway will deliver
// them again, and the ledger drops the duplicates).
func (w *Worker) ack(ctx context.Context, ids ...string) {
	if err := w.api.ack(ctx, ids...); err != nil {
		w.opts.Logger.Warn("agentkit: ack failed", "ids", ids, "err", err)
	}
}
