package main

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/mcpgate/mcpgate/h1"
)

// front is the gateway's HTTP server: h1's server for the common requests
// of plain HTTP/1.1 connections (the calls' POSTs), and net/http for each
// connection h1 hands over (GET streams, anything else; h1.Server).
type front struct {
	fast *h1.Server
	std  *http.Server
}

// Serve serves ln until Shutdown, when it returns http.ErrServerClosed.
func (f *front) Serve(ln net.Listener) error {
	handover := f.fast.Handover()
	go f.std.Serve(handover) //nolint:errcheck // ends at Shutdown, which reports
	return f.fast.Serve(ln)
}

// Shutdown stops accepting, then waits for the requests of both servers
// to end, or for ctx.
func (f *front) Shutdown(ctx context.Context) error {
	return errors.Join(f.fast.Shutdown(ctx), f.std.Shutdown(ctx))
}
