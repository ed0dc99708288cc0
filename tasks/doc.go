// Package tasks runs tools/calls in the background as durable tasks: the
// management API's POST /api/v1/agents/{agent}/tasks and MCP's
// task-augmented tools/call both start one here. A task runs the same
// pipeline as any tools/call (rate limit, idempotency, approval, audit),
// detached from the request that started it, with a cancel function of its
// own; its row in the store says where it stands, so that its caller can
// poll, fetch the result or cancel from any connection and any replica,
// and so that a task cut off by a restart is marked failed rather than
// left working forever.
//
// It imports only the standard library and the root package; it must not
// import the transport, the pipeline, a store or a backend.
package tasks
