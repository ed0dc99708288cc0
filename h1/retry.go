package h1

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
)

// lostIdle reports whether err is a kept-alive connection's end before
// an answer: the server closed it (end of file where the answer's head
// should start or before it ended) or reset it. A request that met it may
// be sent again when it can be sent twice (replayable).
func lostIdle(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// replayable reports whether req may be sent twice, as net/http decides:
// a GET, HEAD, OPTIONS or TRACE, or a request with an Idempotency-Key or
// X-Idempotency-Key header, whose body, if any, can be made again
// (GetBody, which http.NewRequest sets for in-memory bodies).
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// rewind returns a replayable req ready to be sent again: a copy with its
// body made anew, or req itself when it has none.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, fmt.Errorf("h1: rewind the request's body: %w", err)
	}
	again := *req
	again.Body = body
	return &again, nil
}
