package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The classes of a failed attempt, as `mcpgate load` counts them.
const (
	classTransport = "transport" // no HTTP answer: refused, reset, cut short
	classHTTP      = "http"      // an HTTP error status other than a lost session
	classSession   = "session"   // HTTP 404 on a request with a session: the session is gone
	classRPC       = "rpc"       // a JSON-RPC error
	classTool      = "tool"      // a result with isError
)

// maxBackoff caps the wait between two attempts of one call.
const maxBackoff = 2 * time.Second

// callError is one failed attempt of a call, with what the load test
// needs to count it and to decide whether to try again.
type callError struct {
	class      string
	status     int           // the HTTP status, or error.data.status of a JSON-RPC error
	code       int           // the JSON-RPC error code
	reason     string        // error.data.reason, when the gateway gave one
	retryAfter time.Duration // error.data.retry_after_ms
	msg        string
}

// Error returns the message the report shows.
func (e *callError) Error() string { return e.msg }

// retryable reports whether the same call, with the same key, may succeed
// later: a failure of the path or a gateway condition that passes
// (conflict, rate limit, unavailable, timeout), not a refusal of the call
// itself (invalid arguments, a mismatched key, a tool's own error). A lost
// session is retryable only when follow re-initializes it.
func (e *callError) retryable(follow bool) bool {
	switch e.class {
	case classTransport:
		return true
	case classSession:
		return follow
	case classHTTP:
		return retryableStatus(e.status)
	case classRPC:
		if e.status != 0 {
			return retryableStatus(e.status)
		}
		return e.code == -32603 || e.code == -32003
	}
	return false
}

// retryableStatus reports whether an HTTP-like status says "try again".
func retryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// classOf returns the class of err, transport for an error that is not a
// callError (the HTTP client's own).
func classOf(err error) string {
	if e, ok := errors.AsType[*callError](err); ok {
		return e.class
	}
	return classTransport
}

// rpcErrorBody is the error member of a JSON-RPC response.
type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    *struct {
		Reason       string `json:"reason"`
		Status       int    `json:"status"`
		RetryAfterMS int64  `json:"retry_after_ms"`
	} `json:"data"`
}

// rpcCallError makes the callError of a JSON-RPC error.
func rpcCallError(method string, e *rpcErrorBody) *callError {
	ce := &callError{class: classRPC, code: e.Code, msg: fmt.Sprintf("%s: error %d: %s", method, e.Code, e.Message)}
	if e.Data != nil {
		ce.reason, ce.status = e.Data.Reason, e.Data.Status
		ce.retryAfter = time.Duration(e.Data.RetryAfterMS) * time.Millisecond
	}
	return ce
}

// httpError makes the callError of an HTTP error status; a 404 on a
// request that carried a session is a lost session.
func httpError(status int, body []byte, withSession bool) *callError {
	ce := &callError{class: classHTTP, status: status, msg: fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(string(body)))}
	var msg struct {
		Error *rpcErrorBody `json:"error"`
	}
	if json.Unmarshal(body, &msg) == nil && msg.Error != nil && msg.Error.Data != nil {
		ce.reason = msg.Error.Data.Reason
		ce.retryAfter = time.Duration(msg.Error.Data.RetryAfterMS) * time.Millisecond
	}
	if status == http.StatusNotFound && withSession {
		ce.class = classSession
	}
	return ce
}

// backoff is how long to wait before attempt n+1 (n from 0): base
// doubled n times, capped at maxBackoff, and never less than what the
// gateway asked for.
func backoff(base time.Duration, n int, asked time.Duration) time.Duration {
	d := base
	for range n {
		if d >= maxBackoff {
			break
		}
		d *= 2
	}
	return max(min(d, maxBackoff), asked)
}

// newRunID returns a random tag that makes one run's idempotency keys
// unlike any other run's: keys are kept for a day per credential.
func newRunID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// withKey returns the arguments object args with idempotency_key set to
// key. args is a JSON object without that member (checked with the flags).
func withKey(args, key string) string {
	inner := strings.TrimSpace(strings.TrimSpace(args)[1:])
	sep := ","
	if strings.HasPrefix(inner, "}") {
		sep = ""
	}
	return `{"idempotency_key":` + strconv.Quote(key) + sep + inner
}

// checkKeyArgs checks that args can take a key: a JSON object that does
// not already hold one.
func checkKeyArgs(args string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &m); err != nil || m == nil {
		return errors.New("--keys needs --args to be a JSON object")
	}
	if _, ok := m["idempotency_key"]; ok {
		return errors.New("--keys sets idempotency_key itself: leave it out of --args")
	}
	return nil
}

// keyedCall makes one logical tools/call: with --keys it carries a fresh
// idempotency key, and a failed attempt is tried again with the same key
// and arguments, up to --retries times, waiting backoff in between. With
// --follow, a session the gateway no longer knows is counted as lost and
// initialized again before the next attempt.
func (s *loadSession) keyedCall(ctx context.Context, c *loadConfig, res *loadResult) error {
	key, args := "", c.args
	if c.keys {
		s.calls++
		key = fmt.Sprintf("load-%s-%d-%d", c.runID, s.index, s.calls)
		args = withKey(c.args, key)
	}
	var first time.Time
	for n := 0; ; n++ {
		err := s.attempt(ctx, c.tool, args)
		if err == nil {
			if n > 0 {
				res.retriedOK(s.index, key, n+1, first)
			}
			return nil
		}
		if ctx.Err() != nil {
			return err // cut short by the end of the run: not a failure
		}
		if n == 0 {
			first = time.Now()
		}
		res.attemptFailed(s.index, key, n+1, err)
		if classOf(err) == classSession && c.follow {
			s.session = ""
			res.lostSession(s.index)
		}
		ce, _ := errors.AsType[*callError](err)
		if n >= c.retries || ce == nil || !ce.retryable(c.follow) {
			res.gaveUp(s.index, key, n+1, first, err)
			return err
		}
		if err := sleepCtx(ctx, backoff(c.backoff, n, ce.retryAfter)); err != nil {
			return err
		}
	}
}

// attempt makes one try of a call, initializing the session first when a
// lost one was dropped.
func (s *loadSession) attempt(ctx context.Context, tool, args string) error {
	if s.session == "" {
		if err := s.initialize(ctx); err != nil {
			return err
		}
	}
	return s.call(ctx, tool, args)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
