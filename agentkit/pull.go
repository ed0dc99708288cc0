package agentkit

import (
	"context"
	"fmt"

	"github.com/mcpgate/mcpgate"
)

// pull starts the handler for a delivered chat message, unless the
// message is a duplicate: one still running is dropped, one handled or
// cancelled already is acknowledged again (the first ack was lost).
func (w *Worker) pull(ctx context.Context, m *mcpgate.Message) {
	hctx, cancel := context.WithCancel(ctx)
	switch w.seen.begin(m.ID, cancel) {
	case running:
		cancel()
		return
	case done, cancelled:
		cancel()
		w.ack(ctx, m.ID)
		return
	}
	finish := func(ctx context.Context, out *outgoing) error {
		err := w.api.post(ctx, m.ChannelID, out)
		if err == nil {
			w.seen.finish(m.ID) // a duplicate from now on needs only an ack
		}
		return err
	}
	req := newRequest(hctx, m, w.api, finish)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer cancel()
		herr := w.run(hctx, req)
		w.conclude(ctx, req, herr)
	}()
}

// run waits for a free slot and runs the handler, turning a panic into
// an error.
func (w *Worker) run(ctx context.Context, req *Request) (err error) {
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.slots }()
	defer func() {
		if p := recover(); p != nil {
			w.opts.Logger.Error("agentkit: handler panicked", "id", req.ID(), "panic", p)
			err = fmt.Errorf("the agent failed while answering")
		}
	}()
	return w.handler(ctx, req)
}

// conclude settles a handled message under the worker's ctx: an error
// without a reply becomes an agent_error; a message without a final
// answer is acknowledged. After a cancel the message is acknowledged
// without an answer; when the worker stops, it is left for redelivery.
func (w *Worker) conclude(ctx context.Context, req *Request, herr error) {
	defer w.seen.finish(req.ID())
	if ctx.Err() != nil {
		return
	}
	if w.seen.state(req.ID()) == cancelled {
		w.ack(ctx, req.ID())
		return
	}
	if req.Replied() {
		return
	}
	if herr != nil {
		err := req.Fail(ctx, herr.Error())
		if err == nil {
			return
		}
		w.opts.Logger.Warn("agentkit: posting the error failed", "id", req.ID(), "err", err)
	}
	w.ack(ctx, req.ID())
}
