package main

import (
	"context"
	"flag"
	"time"

	"github.com/mcpgate/mcpgate/audit"
	"github.com/mcpgate/mcpgate/config"
	"github.com/mcpgate/mcpgate/metrics"
	"github.com/mcpgate/mcpgate/pipeline"
)

// Defaults of the governance settings.
const (
	defaultCallRetention = 30 * 24 * time.Hour
	// sweepBatch is how many rows one sweep statement deletes, so that a
	// sweep never holds the writer long.
	sweepBatch = 1000
)

// governanceFlags are serve's flags for idempotency and the audit log. A
// zero value means: the config file's setting, else the default.
type governanceFlags struct {
	IdempotencyTTL   time.Duration
	IdempotencyGrace time.Duration
	CallRetention    time.Duration
}

// register adds the flags to fs.
func (g *governanceFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&g.IdempotencyTTL, "idempotency-ttl", 0, "how long a call's result is replayed for its idempotency key (default: idempotency_ttl from --config, else 24h)")
	fs.DurationVar(&g.IdempotencyGrace, "idempotency-grace", pipeline.DefaultClaimGrace, "how long past a tool's deadline the claim of a call cut by a killed gateway holds its idempotency key before a retry may run")
	fs.DurationVar(&g.CallRetention, "call-retention", 0, "how long the audit log keeps calls (default: call_retention from --config, else 720h)")
}

// problem names a flag value serve cannot run with, or returns "".
func (g *governanceFlags) problem() string {
	switch {
	case g.IdempotencyTTL < 0:
		return "--idempotency-ttl must be a positive duration such as 24h"
	case g.IdempotencyGrace < 0:
		return "--idempotency-grace must be a positive duration such as 30s"
	case g.CallRetention < 0:
		return "--call-retention must be a positive duration such as 720h"
	}
	return ""
}

// governanceSettings resolves the flags against the config file: a flag
// wins, then the file, then the default.
func (m *Main) governanceSettings() (ttl, retention time.Duration) {
	ttl, retention = m.Config.Governance.IdempotencyTTL, m.Config.Governance.CallRetention
	if (ttl == 0 || retention == 0) && m.Config.ConfigPath != "" {
		// A file that does not load fails the start anyway, with its errors.
		if c, err := config.Load(m.Config.ConfigPath, m.Env.LookupEnv); err == nil {
			ttl, retention = firstSet(ttl, time.Duration(c.IdempotencyTTL)), firstSet(retention, time.Duration(c.CallRetention))
		}
	}
	return firstSet(ttl, pipeline.DefaultIdempotencyTTL), firstSet(retention, defaultCallRetention)
}

// firstSet returns the first non-zero duration.
func firstSet(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// govern puts the idempotency stage's store and the audit log in the
// pipeline's options, unless Config.ungoverned leaves them out.
func (m *Main) govern(opts *pipeline.Options, met *metrics.Metrics) {
	if m.Config.ungoverned {
		return
	}
	opts.Idempotency, opts.Auditor = m.store, m.newAuditLog(met)
	opts.ClaimGrace = m.Config.Governance.IdempotencyGrace
}

// newAuditLog starts the audit log's writer; Close flushes it.
func (m *Main) newAuditLog(met *metrics.Metrics) *audit.Log {
	m.audit = audit.New(&audit.Options{Store: m.store, Dropped: met.NewAuditDrops(), Logger: m.logger})
	go m.audit.Run()
	return m.audit
}

// sweepGovernance deletes expired idempotency keys every minute and calls
// past their retention every hour, in batches, until ctx ends.
func (m *Main) sweepGovernance(ctx context.Context, retention time.Duration) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for n := 0; ; n++ {
		m.sweepIdempotency(ctx)
		if n%60 == 0 {
			m.sweepCalls(ctx, retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sweepIdempotency deletes expired idempotency keys in batches.
func (m *Main) sweepIdempotency(ctx context.Context) {
	sweepBatches(ctx, m, "idempotency keys", func() (int64, error) {
		return m.store.DeleteExpiredIdempotency(ctx, time.Now(), sweepBatch)
	})
}

// sweepCalls deletes calls older than the retention in batches.
func (m *Main) sweepCalls(ctx context.Context, retention time.Duration) {
	sweepBatches(ctx, m, "audit log calls", func() (int64, error) {
		return m.store.DeleteCallsBefore(ctx, time.Now().Add(-retention), sweepBatch)
	})
}

// sweepBatches runs one batch after another until one deletes less than a
// full batch, and logs the total.
func sweepBatches(ctx context.Context, m *Main, what string, batch func() (int64, error)) {
	var total int64
	for ctx.Err() == nil {
		n, err := batch()
		if err != nil {
			m.logger.Warn("sweep of expired "+what+" failed", "err", err)
			break
		}
		total += n
		if n < sweepBatch {
			break
		}
	}
	if total > 0 {
		m.logger.Info("expired "+what+" removed", "count", total)
	}
}
