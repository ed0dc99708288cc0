// Package agentkit is the client side of mcpgate's message service: it
// turns a function into an agent worker that answers the tool calls an MCP
// host makes to an agent skill.
//
// A pull worker holds the gateway's inbox stream, runs the handler for
// each chat message in its own goroutine and posts what the handler
// replies:
//
//	w := agentkit.New(agentkit.Options{URL: "http://127.0.0.1:8094", Key: os.Getenv("MCPGATE_AGENT_KEY")})
//	w.Handle(func(ctx context.Context, req *agentkit.Request) error {
//		req.Delta("thinking…")
//		return req.Reply(ctx, agentkit.Text("42"))
//	})
//	log.Fatal(w.Run(ctx))
//
// Run reconnects with backoff and resumes after the last event it saw,
// drops redelivered duplicates (they carry the same message ID),
// acknowledges each message once it is handled, and cancels a handler's
// ctx when the caller gives up (a cancel message). A handler that returns
// an error without replying answers with an agent_error carrying the
// error's text.
//
// When the gateway traces, each chat message carries the W3C trace
// context of the call (Request.Trace), so that the worker's own spans
// join the MCP host's trace.
//
// An agent reachable over HTTPS can take pushed envelopes instead:
// Worker.PushHandler (or PushHandler) verifies each envelope's signature
// and answers in the response when the handler replies in time.
//
// The package imports only the standard library, the root package
// mcpgate (whose Message type is the envelope's JSON), pushsig (the push
// signature) and h1 (an HTTP/1.1 client transport on the standard library
// alone, for a gateway at a plain http:// URL); it must not import any
// other package of the gateway, so that agents depend on nothing but the
// wire contract.
package agentkit
