package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcpclient"
)

// listenRetry is the wait before a subscriptions/listen request that
// ended is sent again.
const listenRetry = time.Second

// stateless reports whether the link's pooled session speaks the
// stateless revision.
func (l *link) stateless() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.main != nil && l.main.cs.Stateless()
}

// listen keeps a subscriptions/listen request open on s, a stateless
// pooled session, while it serves: the revision's replacement for the GET
// stream and resources/subscribe. It asks for every list change and for
// the resources downstream sessions subscribed to; the notifications
// reach the link as those of an older session's GET stream would.
// restartListen sends it again when the subscriptions change.
func (l *link) listen(s *session) {
	for l.ctx.Err() == nil && s.alive() {
		ctx, cancel := context.WithCancel(l.ctx)
		l.mu.Lock()
		l.relisten = cancel
		l.mu.Unlock()
		_, err := s.cs.Call(ctx, "subscriptions/listen", l.listenParams(), &mcpclient.CallOptions{Notify: s.notified})
		restarted := ctx.Err() != nil
		cancel()
		if restarted {
			continue
		}
		var rpc *mcpgate.RPCError
		switch {
		case errors.As(err, &rpc) && rpc.Code == -32601:
			return // the upstream has no subscriptions
		case err != nil && !errors.As(err, &rpc):
			// The upstream cannot be reached: a stateless session has
			// no other stream to notice that by, so it ends here, and
			// the link records the error and dials again.
			l.m.log.Warn("upstream subscriptions/listen failed; reconnecting", "skill", l.name(), "err", err)
			_ = s.cs.Close()
			return
		}
		l.m.log.Debug("upstream subscriptions/listen ended", "skill", l.name(), "err", err)
		select {
		case <-time.After(listenRetry):
		case <-l.ctx.Done():
		case <-s.closed:
		}
	}
}

// listenParams are the params of subscriptions/listen: every list change
// and the URIs subscribed to.
func (l *link) listenParams() json.RawMessage {
	l.mu.Lock()
	uris := make([]string, 0, len(l.subs))
	for uri := range l.subs {
		uris = append(uris, uri)
	}
	l.mu.Unlock()
	n := map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}
	if len(uris) > 0 {
		n["resourceSubscriptions"] = uris
	}
	return mustJSON(map[string]any{"notifications": n})
}

// restartListen sends the link's subscriptions/listen again, with the
// subscriptions as they are now.
func (l *link) restartListen() {
	l.mu.Lock()
	cancel := l.relisten
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
