package mcpclient

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// A POST of a message goes through the client's Transport as an
// http.Request, and its reply comes back as an http.Response whose Header
// the transport fills with every field of the reply's head, of which the
// client reads two. A transport that can post without those (poster: h1's,
// for the plain-HTTP URLs it serves itself) is handed the request's header
// fields as text, made once per session, and returns only the reply's
// status, the two fields and the body: on the project's VM, 22 µs less of
// one session's relayed call at the median of 15 runs (docs/performance.md,
// round 24).

// poster is a transport that posts a message without an http.Request or
// http.Response (h1.Transport.Post): fields are the request's header
// fields, each line "Name: value\r\n"; values are those of the reply's
// fields names, in their order.
type poster interface {
	Post(ctx context.Context, u *url.URL, fields, body []byte, names []string) (status int, values []string, rc io.ReadCloser, err error)
}

// replyFields are the fields of a POST's reply the client reads, in the
// order of httpReply's members.
var replyFields = []string{"Content-Type", "Mcp-Session-Id"}

// httpReply is what the client reads of a reply to its POST or GET: the
// status, two fields of the head, and the body.
type httpReply struct {
	status      int
	contentType string
	session     string
	length      int64 // the Content-Length; -1 when unknown
	body        io.ReadCloser
}

// replyOf is the reply of resp.
func replyOf(resp *http.Response) *httpReply {
	return &httpReply{
		status:      resp.StatusCode,
		contentType: resp.Header.Get("Content-Type"),
		session:     resp.Header.Get("Mcp-Session-Id"),
		length:      resp.ContentLength,
		body:        resp.Body,
	}
}

// postMessage POSTs msg with the headers extra adds (in place of the
// session's of the same name), and returns the reply: through the
// transport's Post when it has one for the endpoint and nothing asks for
// an http.Request (cookies, a timeout), else as an http.Request (post,
// do). A redirect goes again through the client, whose policy follows it
// (or not).
func (t *httpTransport) postMessage(ctx context.Context, msg []byte, extra http.Header) (*httpReply, error) {
	ps, ok := t.hc.Transport.(poster)
	if !ok || !t.parks() {
		return t.postRequest(ctx, msg, extra, t.do)
	}
	rp, err := t.postText(ctx, ps, msg, extra)
	if err != nil || !redirect(rp.status) {
		return rp, err
	}
	rp.body.Close()
	return t.postRequest(ctx, msg, extra, t.redirected)
}

// postText posts msg through ps, with the session's header fields and
// extra's in place of those of the same name.
func (t *httpTransport) postText(ctx context.Context, ps poster, msg []byte, extra http.Header) (*httpReply, error) {
	h, fields := t.postShared()
	if len(extra) > 0 {
		fields = appendFields(appendFields(nil, h, extra), extra, nil)
	}
	status, values, body, err := ps.Post(ctx, t.u, fields, msg, replyFields)
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: t.u.String(), Err: err}
	}
	return &httpReply{status: status, contentType: values[0], session: values[1], length: -1, body: body}, nil
}

// postRequest posts msg as an http.Request with the headers extra adds,
// sent by send.
func (t *httpTransport) postRequest(ctx context.Context, msg []byte, extra http.Header, send func(*http.Request) (*http.Response, error)) (*httpReply, error) {
	req, err := t.post(ctx, msg, extra)
	if err != nil {
		return nil, err
	}
	resp, err := send(req)
	if err != nil {
		return nil, err
	}
	return replyOf(resp), nil
}

// redirect reports whether a status redirects the request.
func redirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// appendFields appends the fields of h that but does not name to b, each
// line "Name: value\r\n".
func appendFields(b []byte, h, but http.Header) []byte {
	for k, vs := range h {
		if _, ok := but[k]; ok {
			continue
		}
		for _, v := range vs {
			b = append(append(append(append(b, k...), ": "...), v...), "\r\n"...)
		}
	}
	return b
}
