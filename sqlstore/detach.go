package sqlstore

import "context"

// detach returns ctx without its cancellation, unless it has ended: then
// ctx itself, so that the statement fails at once with ctx's error.
//
// modernc's SQLite driver starts a goroutine and a channel for every
// statement (and BEGIN) whose context can be canceled, to interrupt the
// statement when it is; every request's context can be. A short
// statement (a lookup by key, a write of one row, any statement of a
// transaction, which must be short anyway) is not worth that: it runs
// detached, after checking that ctx is still live. Statements that may
// run long (a scan of a large table, a sweep) keep ctx. A ctx that can
// never end (detached already, as the statements of a batch are) is
// returned as it is, without a new context each statement.
func detach(ctx context.Context) context.Context {
	if ctx.Done() == nil || ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}
