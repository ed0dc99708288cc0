package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/pipeline"
	"github.com/mcpgate/mcpgate/ratelimit"
)

// rateLimitFlag is --rate-limit PER_MINUTE[:BURST], the limit of skills and
// tools without one of their own; unset, they have none.
type rateLimitFlag struct{ limit *mcpgate.RateLimit }

// register adds --rate-limit to fs.
func (f *rateLimitFlag) register(fs *flag.FlagSet) {
	fs.Var(f, "rate-limit", "default rate limit per caller and agent, as PER_MINUTE[:BURST] (burst defaults to PER_MINUTE); off when empty")
}

// String returns the flag's value as given.
func (f *rateLimitFlag) String() string {
	if f == nil || f.limit == nil {
		return ""
	}
	return fmt.Sprintf("%d:%d", f.limit.PerMinute, f.limit.Burst)
}

// Set parses PER_MINUTE[:BURST]; an empty value turns the default off.
func (f *rateLimitFlag) Set(v string) error {
	if v == "" {
		f.limit = nil
		return nil
	}
	rate, burst, hasBurst := strings.Cut(v, ":")
	l := &mcpgate.RateLimit{}
	var err error
	if l.PerMinute, err = strconv.ParseInt(rate, 10, 64); err != nil {
		return errors.New("want PER_MINUTE[:BURST], such as 60 or 60:10")
	}
	l.Burst = l.PerMinute
	if hasBurst {
		if l.Burst, err = strconv.ParseInt(burst, 10, 64); err != nil {
			return errors.New("want PER_MINUTE[:BURST], such as 60 or 60:10")
		}
	}
	if err := l.Validate(); err != nil {
		return errors.New(mcpgate.ErrorMessage(err))
	}
	f.limit = l
	return nil
}

// limiter returns where rate limits are kept: in this process on SQLite,
// and in the database on PostgreSQL, where replicas share the budget.
func (m *Main) limiter() pipeline.Limiter {
	if m.Config.store.postgresDSN() != "" {
		return ratelimit.NewShared(m.store, nil)
	}
	return ratelimit.NewMemory(nil)
}

// sweepRateBuckets forgets the shared rate buckets that are full again.
func (m *Main) sweepRateBuckets(ctx context.Context) {
	if n, err := m.store.DeleteFullBuckets(ctx, time.Now()); err != nil {
		m.logger.Warn("rate bucket sweep", "err", err)
	} else if n > 0 {
		m.logger.Debug("full rate buckets removed", "count", n)
	}
}
