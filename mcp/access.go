package mcp

import (
	"context"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// DefaultSlowCall is the duration beyond which a request's access-log line
// is a warning, when Options.SlowCall is zero.
const DefaultSlowCall = 5 * time.Second

// maxLoggedMessage bounds a backend's message in the access log.
const maxLoggedMessage = 300

// access is what one request's access-log line reports besides its
// method: the tool it called and how it ended. It never holds arguments.
type access struct {
	tool      string
	err       error
	toolError string // the text of a tool's error result
	failure   string // the code of a backend that could not serve the call
	cancelled bool
}

// setResult notes a tool's result; an error result keeps its first text.
func (a *access) setResult(res *mcpgate.Result) {
	if res == nil || !res.IsError || res.Invalid != nil {
		return
	}
	a.toolError, a.failure = "tool error", res.Failure
	for _, c := range res.Content {
		if c.Text != "" {
			a.toolError = c.Text
			break
		}
	}
}

// outcome names how the request ended: ok, cancelled, tool_error, the
// failure of a backend that could not serve the call (timeout,
// unavailable) or the error's code.
func (a *access) outcome() string {
	switch {
	case a.cancelled:
		return "cancelled"
	case a.err != nil:
		return mcpgate.ErrorCode(a.err)
	case a.failure != "":
		return a.failure
	case a.toolError != "":
		return "tool_error"
	}
	return "ok"
}

// backendFailed reports whether the backend, not the client, made the
// request fail; its message is then worth a warning.
func (a *access) backendFailed() bool {
	if a.toolError != "" {
		return true
	}
	switch mcpgate.ErrorCode(a.err) {
	case mcpgate.ETIMEOUT, mcpgate.EUNAVAILABLE, mcpgate.EINTERNAL:
		return a.err != nil
	}
	return false
}

// message is the backend's message, shortened.
func (a *access) message() string {
	msg := a.toolError
	if msg == "" && a.err != nil {
		msg = mcpgate.ErrorMessage(a.err)
	}
	if len(msg) > maxLoggedMessage {
		cut := maxLoggedMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// logAccess writes one request's access-log line: at info, or at warn
// when it was slow or its backend failed (then with the backend's
// message). Arguments and credentials never appear in it.
func (s *Server) logAccess(ctx context.Context, ls *liveSession, agent *mcpgate.Agent, method string, a *access, start time.Time) {
	if s.access == nil {
		return
	}
	now := s.now()
	d := now.Sub(start)
	level, slow, failed := slog.LevelInfo, d > s.slowCall, a.backendFailed()
	if slow || failed {
		level = slog.LevelWarn
	}
	h := s.access.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	// The record goes to the handler as Logger.LogAttrs would send it,
	// at the time just read and without the caller's program counter,
	// which the line does not show: looking it up cost a call a stack
	// walk.
	r := slog.NewRecord(now, level, "mcp request", 0)
	r.AddAttrs(slog.String("method", method), slog.String("agent", agent.ID))
	if a.tool != "" {
		r.AddAttrs(slog.String("tool", a.tool))
	}
	r.AddAttrs(slog.String("outcome", a.outcome()), slog.Duration("duration", d), slog.String("session", ls.id))
	if id := s.tracer.TraceID(ctx); id != "" {
		r.AddAttrs(slog.String("trace_id", id))
	}
	if slow {
		r.AddAttrs(slog.Bool("slow", true))
	}
	if failed {
		r.AddAttrs(slog.String("backend_message", a.message()))
	}
	_ = h.Handle(ctx, r) // as Logger's, a handler's failure is not the request's
}
