package agentkit

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pushsig"
)

// maxPushBody bounds a pushed envelope.
const maxPushBody = 8 << 20

// PushHandler returns a receiver for envelopes the gateway pushes to a
// skill's push_url, signed with secret (the skill's push_secret). The
// handler h answers them as a worker without URL would: the receiver
// waits for the reply however long h takes and sends it in the response.
// Use Worker.PushHandler to stream deltas, read history, or reply after
// the response.
func PushHandler(secret []byte, h HandlerFunc) http.Handler {
	w := New(Options{})
	w.Handle(h)
	return w.PushHandler(secret)
}

// PushHandler returns a receiver for envelopes the gateway pushes to a
// skill's push_url, signed with secret. It refuses (401) a request whose
// Mcpgate-Signature does not sign its body or is older than five
// minutes. For a chat message it answers 200 with the reply when the
// handler replies within Options.PushWait, else 202, and the reply goes
// later through the messages API. A cancel message cancels the handler's
// ctx; a duplicate of a message still running or handled is answered 202.
func (w *Worker) PushHandler(secret []byte) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.servePush(rw, r, secret)
	})
}

// servePush checks and decodes one pushed envelope, then answers it.
func (w *Worker) servePush(rw http.ResponseWriter, r *http.Request, secret []byte) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		http.Error(rw, "POST an envelope", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxPushBody))
	if err != nil {
		http.Error(rw, "envelope too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	if err := pushsig.Verify(secret, r.Header.Get(pushsig.Header), body, time.Now(), pushsig.DefaultMaxAge); err != nil {
		w.opts.Logger.Warn("agentkit: refused a pushed envelope", "err", err)
		http.Error(rw, err.Error(), http.StatusUnauthorized)
		return
	}
	var m mcpgate.Message
	if err := json.Unmarshal(body, &m); err != nil || m.ID == "" {
		http.Error(rw, "the body is not an envelope", http.StatusBadRequest)
		return
	}
	switch m.Type {
	case mcpgate.MessageChat:
		w.answerPush(rw, r, &m)
	case mcpgate.MessageCancel:
		w.seen.cancel(m.InReplyTo)
		rw.WriteHeader(http.StatusNoContent)
	default:
		rw.WriteHeader(http.StatusNoContent)
	}
}

// answerPush runs the handler for a pushed chat message and answers with
// its reply if it comes in time.
func (w *Worker) answerPush(rw http.ResponseWriter, r *http.Request, m *mcpgate.Message) {
	if w.handler == nil {
		http.Error(rw, errNoHandler.Error(), http.StatusInternalServerError)
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	if w.seen.begin(m.ID, cancel) != unseen {
		cancel()
		rw.WriteHeader(http.StatusAccepted)
		return
	}
	h := &handoff{open: true, ch: make(chan *outgoing, 1)}
	finish := func(ctx context.Context, out *outgoing) error {
		if h.give(out) {
			return nil
		}
		err := w.api.post(ctx, m.ChannelID, out)
		return err
	}
	req := newRequest(ctx, m, w.api, finish)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		herr := w.run(ctx, req)
		w.concludePush(req, herr)
	}()
	w.respond(rw, r, h, done)
}

// concludePush answers with an agent_error when the handler failed
// without replying, unless the caller cancelled.
func (w *Worker) concludePush(req *Request, herr error) {
	defer w.seen.finish(req.ID())
	if herr == nil || req.Replied() || w.seen.state(req.ID()) == cancelled {
		return
	}
	ctx := context.WithoutCancel(req.ctx)
	if err := req.Fail(ctx, herr.Error()); err != nil {
		w.opts.Logger.Warn("agentkit: posting the error failed", "id", req.ID(), "err", err)
	}
}

// respond writes the reply if it comes within PushWait (or at all, when
// there is no URL to post it later), else 202.
func (w *Worker) respond(rw http.ResponseWriter, r *http.Request, h *handoff, done <-chan struct{}) {
	var timeout <-chan time.Time
	if w.opts.URL != "" {
		t := time.NewTimer(w.opts.PushWait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case out := <-h.ch:
		writeReply(rw, out)
		return
	case <-done:
	case <-timeout:
	case <-r.Context().Done():
	}
	h.close()
	select {
	case out := <-h.ch:
		writeReply(rw, out)
	default:
		rw.WriteHeader(http.StatusAccepted)
	}
}

// writeReply answers 200 with a final message.
func writeReply(rw http.ResponseWriter, out *outgoing) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	json.NewEncoder(rw).Encode(out)
}

// handoff passes a final answer to the push response that waits for it,
// until that response gives up waiting.
type handoff struct {
	mu   sync.Mutex
	open bool
	ch   chan *outgoing // buffered: give never blocks
}

// give hands out over, reporting false when the response stopped waiting.
func (h *handoff) give(out *outgoing) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.open {
		return false
	}
	h.open = false
	h.ch <- out
	return true
}

// close stops the handoff; a later answer goes through the messages API.
func (h *handoff) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.open = false
}
