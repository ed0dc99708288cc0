package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/registry"
)

// Limiter decides whether a caller may make one more call.
type Limiter interface {
	// Allow takes one token from the bucket at key, refilled at limit. It
	// returns 0 when the call may go ahead, else how long until a token is
	// free; a refused call takes nothing.
	Allow(ctx context.Context, key string, limit mcpgate.RateLimit) (time.Duration, error)
}

// LimitRecorder counts the calls refused by a rate limit.
type LimitRecorder interface {
	RateLimited(agent string)
}

// rateLimit refuses the call with ERATELIMIT, carrying the time until a
// token is free, when its caller has spent the budget that applies to it.
func (p *Pipeline) rateLimit(ctx context.Context, e *registry.Entry, call *mcpgate.Call) error {
	limit, key := p.limitFor(e, call)
	if limit == nil || p.opts.Limiter == nil {
		return nil
	}
	wait, err := p.opts.Limiter.Allow(ctx, key, *limit)
	if err != nil || wait <= 0 {
		return err
	}
	if p.opts.LimitRecorder != nil {
		p.opts.LimitRecorder.RateLimited(call.Agent.ID)
	}
	ms := int64((wait + time.Millisecond - 1) / time.Millisecond)
	return &mcpgate.Error{Code: mcpgate.ERATELIMIT, RetryAfterMS: ms, Message: fmt.Sprintf(
		"Rate limit reached: at most %d calls a minute (burst %d) of tool %s; retry in %d ms.",
		limit.PerMinute, limit.Burst, e.Name, ms)}
}

// limitFor returns the limit that applies to the call and the key of its
// bucket: the tool's own (a bucket per caller, agent and tool), else its
// skill's (per caller, agent and skill), else the gateway's default (per
// caller and agent). The limit is nil, and no key is built, when there is
// none.
func (p *Pipeline) limitFor(e *registry.Entry, call *mcpgate.Call) (*mcpgate.RateLimit, string) {
	var limit *mcpgate.RateLimit
	var scope string
	switch {
	case e.Tool.RateLimit != nil:
		limit, scope = e.Tool.RateLimit, "\n"+e.Skill.Name+"\n"+e.Tool.Name
	case e.Skill.RateLimit != nil:
		limit, scope = e.Skill.RateLimit, "\n"+e.Skill.Name
	default:
		limit = p.opts.DefaultRateLimit
	}
	if limit == nil {
		return nil, ""
	}
	return limit, callerIdentity(call) + "\n" + call.Agent.ID + scope
}

// callerIdentity is who rate limits and idempotency keys are scoped to: the
// identity of whoever makes the call, as the edge set it.
func callerIdentity(call *mcpgate.Call) string {
	return call.Caller.Identity
}
