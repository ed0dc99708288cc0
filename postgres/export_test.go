package postgres

import (
	"context"
	"runtime"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/mcpgate/mcpgate/sqlstore"
)

// HoldPublishing makes b's first sender wait, before it takes the queue,
// until n notifications are queued, so that they make one batch.
func HoldPublishing(b *Broker, n int) {
	var once sync.Once
	b.pub.Hold = func() {
		once.Do(func() {
			for b.pub.Queued() < n {
				runtime.Gosched()
			}
		})
	}
}

// PublishBatches returns how many statements b sent notifications in.
func PublishBatches(b *Broker) int {
	n, _ := b.pub.Batches()
	return n
}

// OpenTraced is Open with each statement the store sends passed to trace
// with its arguments, before it runs.
func OpenTraced(ctx context.Context, dsn string, trace func(sql string, args []any)) (*sqlstore.Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Tracer = queryTracer(trace)
	return openConfig(ctx, cfg)
}

// queryTracer passes each query's SQL and arguments to a function.
type queryTracer func(sql string, args []any)

func (t queryTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t(d.SQL, d.Args)
	return ctx
}

func (queryTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
