package mcpclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// httpTransport speaks Streamable HTTP to one endpoint.
type httpTransport struct {
	url    string
	u      *url.URL // url parsed once, nil if it does not parse
	hc     *http.Client
	header http.Header // the caller's headers, on every request

	s       *Session
	mu      sync.Mutex
	session string // Mcp-Session-Id, once the server gave one
	version string // MCP-Protocol-Version, once negotiated
	// sessionHdr and versionHdr are session and version as header values,
	// made once for every request (net/http only reads them).
	sessionHdr, versionHdr []string
	// postHdr is the whole Header of a POST that adds none of its own,
	// shared by every such POST (postHeader), and postFields its fields
	// as a poster takes them; postFor is the session and version they
	// were made with.
	postHdr    http.Header
	postFields []byte
	postFor    [2]string
	listen     sync.WaitGroup
	drains     sync.WaitGroup // reply streams read to their end (release)
	readers    readerPool
	// drainWait bounds the wait for the end of a reply stream whose
	// answer came (defaultDrainWait).
	drainWait time.Duration
}

// NewHTTP returns a Streamable HTTP transport to endpoint through hc, whose
// Transport pools connections (keep-alive). header, which may hold
// secrets, goes on every request; hc must not follow redirects to other
// origins with it (the caller's client decides).
func NewHTTP(endpoint string, hc *http.Client, header http.Header) Transport {
	if hc == nil {
		hc = http.DefaultClient
	}
	u, _ := url.Parse(endpoint)
	return &httpTransport{url: endpoint, u: u, hc: hc, header: header, drainWait: defaultDrainWait}
}

func (t *httpTransport) start(s *Session) error { t.s = s; return nil }

func (t *httpTransport) oneStream() bool { return false }

// negotiated records the version.
func (t *httpTransport) negotiated(version string) {
	t.mu.Lock()
	t.version, t.versionHdr = version, []string{version}
	t.mu.Unlock()
}

// initialized opens the GET stream.
func (t *httpTransport) initialized() {
	t.listen.Add(1)
	go t.listenLoop()
}

// request builds a request to the endpoint with the session's headers.
func (t *httpTransport) request(ctx context.Context, method string, body []byte) (*http.Request, error) {
	req, err := t.newRequest(ctx, method, body)
	if err != nil {
		return nil, err
	}
	for k, v := range t.header {
		req.Header[k] = v
	}
	t.mu.Lock()
	if t.session != "" {
		req.Header["Mcp-Session-Id"] = t.sessionHdr
	}
	if t.version != "" {
		req.Header["Mcp-Protocol-Version"] = t.versionHdr
	}
	t.mu.Unlock()
	return req, nil
}

// post builds a POST of msg with the headers extra adds. One that adds
// none gets the Header every such POST shares (postHeader) where do hands
// it to the client's Transport, which only reads it (a RoundTripper must
// not change a request); the client itself would add cookies to it.
func (t *httpTransport) post(ctx context.Context, msg []byte, extra http.Header) (*http.Request, error) {
	if len(extra) > 0 || t.hc.Jar != nil || t.hc.Timeout != 0 || t.u == nil {
		req, err := t.request(ctx, http.MethodPost, msg)
		if err != nil {
			return nil, err
		}
		req.Header["Content-Type"] = contentTypeJSON
		req.Header["Accept"] = acceptPost
		for k, v := range extra {
			req.Header[k] = v
		}
		return req, nil
	}
	req, err := t.newRequest(ctx, http.MethodPost, msg)
	if err != nil {
		return nil, err
	}
	req.Header = t.postHeader()
	return req, nil
}

// postHeader returns the Header POSTs share (postShared).
func (t *httpTransport) postHeader() http.Header {
	h, _ := t.postShared()
	return h
}

// postShared returns the Header POSTs share and its fields as a poster
// takes them (postFields), both made again at the first POST after the
// session or version changed.
func (t *httpTransport) postShared() (http.Header, []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.postHdr != nil && t.postFor == [2]string{t.session, t.version} {
		return t.postHdr, t.postFields
	}
	h := make(http.Header, len(t.header)+4)
	for k, v := range t.header {
		h[k] = v
	}
	if t.session != "" {
		h["Mcp-Session-Id"] = t.sessionHdr
	}
	if t.version != "" {
		h["Mcp-Protocol-Version"] = t.versionHdr
	}
	h["Content-Type"] = contentTypeJSON
	h["Accept"] = acceptPost
	t.postHdr, t.postFields, t.postFor = h, appendFields(nil, h, nil), [2]string{t.session, t.version}
	return h, t.postFields
}

// newRequest is http.NewRequestWithContext without parsing the endpoint's
// URL again for every request (a copy of the one parsed by NewHTTP), and
// with the message as a body that closes itself and gives itself again
// for a redirect (getBody), where net/http wraps a reader in two more
// values and a closure.
func (t *httpTransport) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	if t.u == nil {
		return http.NewRequestWithContext(ctx, method, t.url, nil) // reports why the URL does not parse
	}
	req, err := http.NewRequestWithContext(ctx, method, "", nil)
	if err != nil {
		return nil, err
	}
	*req.URL = *t.u
	req.Host = strings.TrimSuffix(t.u.Host, ":")
	if len(body) > 0 {
		req.Body = newPostBody(body)
		req.ContentLength = int64(len(body))
	}
	return req, nil
}

// postBody is the body of a request that posts one message.
type postBody struct {
	bytes.Reader
	b []byte
}

// newPostBody returns the body of a request posting b.
func newPostBody(b []byte) *postBody {
	pb := &postBody{b: b}
	pb.Reset(b)
	return pb
}

// Close does nothing: the message is a slice.
func (m *postBody) Close() error { return nil }

// getBody sets req.GetBody for a message, which a redirect reads again.
func getBody(req *http.Request) {
	m, ok := req.Body.(*postBody)
	if !ok || req.GetBody != nil {
		return
	}
	b := m.b
	req.GetBody = func() (io.ReadCloser, error) { return newPostBody(b), nil }
}

// send POSTs one message; for a request it reads the reply (JSON, or an
// event stream resumed as needed) until the response comes.
func (t *httpTransport) send(ctx context.Context, msg []byte, p *pending) error {
	if p == nil {
		_, err := t.exchange(ctx, msg, nil)
		return err
	}
	if t.parks() {
		// The rest of a reply stream is parked before the call returns:
		// the exchange needs no context of its own.
		rest, err := t.exchange(ctx, msg, p)
		if rest != nil {
			t.release(rest, nil)
		}
		return err
	}
	x := detach(ctx)
	rest, err := t.exchange(x.ctx, msg, p)
	if rest == nil {
		x.end()
		return err
	}
	t.release(rest, x)
	return err
}

// parkingTransport is a RoundTripper whose response bodies for a URL can
// be parked (h1's, for the plain-HTTP URLs it serves itself).
type parkingTransport interface {
	Parks(u *url.URL) bool
}

// parks reports whether the rest of a reply stream will be parked
// (release) rather than read in the background: the client's Transport
// serves the endpoint itself and parks, and the client does not wrap the
// exchange (cookies, a timeout).
func (t *httpTransport) parks() bool {
	pt, ok := t.hc.Transport.(parkingTransport)
	return ok && t.u != nil && t.hc.Jar == nil && t.hc.Timeout == 0 && pt.Parks(t.u)
}

// exchange POSTs one message and reads the reply as send does. It returns
// the rest of a reply stream whose answer came before the stream's end,
// for release.
func (t *httpTransport) exchange(ctx context.Context, msg []byte, p *pending) (rest io.ReadCloser, err error) {
	var extra http.Header
	if p != nil && p.opts != nil {
		extra = p.opts.Header
	}
	rp, err := t.postMessage(ctx, msg, extra)
	if err != nil {
		return nil, err
	}
	if err := t.check(rp); err != nil {
		rp.body.Close()
		return nil, err
	}
	if id := rp.session; id != "" {
		t.mu.Lock()
		if t.session == "" {
			t.session, t.sessionHdr = id, []string{id}
		}
		t.mu.Unlock()
	}
	if p == nil || rp.status == http.StatusAccepted {
		_, _ = io.Copy(io.Discard, io.LimitReader(rp.body, 4096))
		closeErr := rp.body.Close()
		if p != nil && t.isStateless() {
			return nil, errAccepted
		}
		return nil, closeErr
	}
	return t.readReply(ctx, rp, p)
}

// detached is the context of a request's HTTP exchange: it ends with the
// call's context until the answer came (end, or release's keep), and then
// only once the reply stream was read to its end. Ending the exchange's
// context closes its connection, which the stream's end would otherwise
// give back to the pool.
type detached struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool // stops ending ctx with the call's
}

// detach returns the context of an exchange for a call under ctx.
func detach(ctx context.Context) *detached {
	x := &detached{}
	x.ctx, x.cancel = context.WithCancel(context.WithoutCancel(ctx))
	x.stop = context.AfterFunc(ctx, x.cancel)
	return x
}

// end ends the exchange.
func (x *detached) end() {
	x.stop()
	x.cancel()
}

// The values of the headers every request of a kind carries; never
// changed (net/http only reads a request's headers).
var (
	contentTypeJSON = []string{"application/json"}
	acceptPost      = []string{"application/json, text/event-stream"}
	acceptStream    = []string{"text/event-stream"}
)

// do sends req. Without cookies or a timeout to apply, it goes through
// the client's Transport directly: http.Client copies every request's
// headers, to follow redirects with. A redirect goes again through the
// client, whose policy follows it (or not).
func (t *httpTransport) do(req *http.Request) (*http.Response, error) {
	if t.hc.Jar != nil || t.hc.Timeout != 0 {
		getBody(req)
		return t.hc.Do(req)
	}
	rt := t.hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		op := req.Method[:1] + strings.ToLower(req.Method[1:])
		return nil, &url.Error{Op: op, URL: req.URL.String(), Err: err}
	}
	if redirect(resp.StatusCode) {
		resp.Body.Close()
		return t.redirected(req)
	}
	return resp, nil
}

// redirected sends req again through the client, which follows the
// redirect its first try met.
func (t *httpTransport) redirected(req *http.Request) (*http.Response, error) {
	getBody(req)
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		again.Body = body
	}
	return t.hc.Do(again)
}

// check returns the error of a reply that is not a success.
func (t *httpTransport) check(rp *httpReply) error {
	if rp.status/100 == 2 {
		return nil
	}
	t.mu.Lock()
	hadSession := t.session != ""
	t.mu.Unlock()
	if rp.status == http.StatusNotFound && hadSession {
		return ErrSessionMissing
	}
	if t.isStateless() {
		return rpcRefusal(rp)
	}
	return refusal(rp)
}

// refusal is the error of a reply refused with a status.
func refusal(rp *httpReply) error {
	text, _ := io.ReadAll(io.LimitReader(rp.body, 300))
	return &StatusError{Status: rp.status, Text: string(bytes.TrimSpace(text))}
}

// StatusError is an HTTP status the server refused a request with.
type StatusError struct {
	Status int
	Text   string
}

// Error returns the status and the start of the body.
func (e *StatusError) Error() string {
	if e.Text == "" {
		return "HTTP " + strconv.Itoa(e.Status)
	}
	return "HTTP " + strconv.Itoa(e.Status) + ": " + e.Text
}

// transient reports whether trying again may help.
func (e *StatusError) transient() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// readReply reads the reply to the request p, and closes its body, or
// returns the rest of a reply stream whose answer came (readStream).
func (t *httpTransport) readReply(ctx context.Context, rp *httpReply, p *pending) (rest io.ReadCloser, err error) {
	mt := mediaType(rp.contentType)
	if mt == "text/event-stream" {
		return t.readStream(ctx, rp.body, p)
	}
	defer rp.body.Close()
	switch mt {
	case "application/json":
		body, err := readBody(rp)
		if err != nil {
			return nil, fmt.Errorf("reading the reply: %w", err)
		}
		if !t.s.receive(body, p) {
			return nil, fmt.Errorf("the reply does not answer the request")
		}
		return nil, nil
	}
	return nil, fmt.Errorf("the reply has content type %q", rp.contentType)
}

// readBody reads a JSON reply, in one buffer when its length is known.
func readBody(rp *httpReply) ([]byte, error) {
	var buf bytes.Buffer
	if n := rp.length; n > 0 && n <= maxEvent {
		buf.Grow(int(n) + bytes.MinRead) // room to read the end too
	}
	// Reading to the end lets the connection go back to the pool.
	_, err := buf.ReadFrom(io.LimitReader(rp.body, maxEvent+1))
	return buf.Bytes(), err
}

// readStream reads a request's event stream until the response, resuming
// it with GET and Last-Event-ID when it ends before. It closes body (and
// the resumed streams), except the one that carried the answer when the
// server has not ended it yet: that one it returns, for release.
func (t *httpTransport) readStream(ctx context.Context, body io.ReadCloser, p *pending) (rest io.ReadCloser, err error) {
	st := &stream{readers: &t.readers}
	for {
		src := &endReader{r: body}
		answered, err := st.read(src, func(data []byte) bool { return t.s.receive(data, p) })
		if answered && !src.ended {
			return body, nil
		}
		body.Close()
		if answered {
			return nil, nil // the stream ended with the answer: its connection is back in the pool
		}
		if st.lastID == "" {
			return nil, fmt.Errorf("the upstream ended its reply stream before answering: %w", err)
		}
		if err == io.EOF && p.opts.Paused != nil {
			p.opts.Paused(st.retry)
		}
		next, rerr := t.resume(ctx, st)
		if rerr != nil {
			return nil, fmt.Errorf("the upstream ended its reply stream before answering, and resuming it failed: %w", rerr)
		}
		body = next
	}
}

// endReader is a reply stream's body that records whether it has ended.
type endReader struct {
	r     io.Reader
	ended bool
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.ended = true
	}
	return n, err
}

// release takes the rest of a reply stream whose answer came. A server
// ends the stream right after the answer, but often in a write of its
// own: the answer does not wait for it. A transport that can park the
// rest (package h1) gives the connection back to its pool with the rest
// unread, to be read before the connection's next request; otherwise the
// rest is read to its end in the background, so that its connection goes
// back to the pool instead of being closed, and its exchange x outlives
// the call until then.
//
// x is nil when the exchange ran under the call's own context (parks): a
// body the transport did not park after all (a redirect through the
// client) is then read in the background too, and loses its connection
// if the call's context ends first.
func (t *httpTransport) release(rest io.ReadCloser, x *detached) {
	if x != nil {
		x.stop()
	}
	if p, ok := rest.(parker); ok {
		p.Park(t.drainWait)
		if x != nil {
			x.cancel()
		}
		return
	}
	t.drains.Add(1)
	go func() {
		defer t.drains.Done()
		drain(rest, t.drainWait)
		if x != nil {
			x.cancel()
		}
	}()
}

// parker is a response body that can give its connection back with its
// rest unread (h1's).
type parker interface {
	Park(wait time.Duration)
}

// defaultDrainWait bounds the wait for the end of a reply stream whose
// answer came.
const defaultDrainWait = 50 * time.Millisecond

// drain reads a reply stream to its end, which the server sends right
// after the answer, and closes it; a server that keeps the stream open
// longer than wait loses the connection.
func drain(body io.ReadCloser, wait time.Duration) {
	stop := time.AfterFunc(wait, func() { body.Close() })
	defer stop.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 1<<20))
	body.Close()
}

// Timings of resumption.
const (
	// resumeDelay is the wait before reconnecting when the server did not
	// advise one with retry.
	resumeDelay = time.Second
	// resumeMaxDelay caps both the advised delay and the backoff.
	resumeMaxDelay = 30 * time.Second
	// resumeTries is how many reconnections in a row may fail; one the
	// server accepts resets the count.
	resumeTries = 3
)

// resume reconnects a stream after its last event id, waiting the
// advised retry (backoff on failures); a refusal other than a transient
// status ends the attempts.
func (t *httpTransport) resume(ctx context.Context, st *stream) (io.ReadCloser, error) {
	delay := min(st.retry, resumeMaxDelay)
	if delay == 0 {
		delay = resumeDelay
	}
	var last error
	for range resumeTries {
		if !sleep(ctx, delay) {
			return nil, ctx.Err()
		}
		body, err := t.get(ctx, st.lastID)
		if err == nil {
			return body, nil
		}
		last = err
		if se, ok := err.(*StatusError); ok && !se.transient() {
			break
		}
		delay = min(2*delay, resumeMaxDelay)
	}
	return nil, last
}

// get opens an event stream with GET, after lastID when not empty.
func (t *httpTransport) get(ctx context.Context, lastID string) (io.ReadCloser, error) {
	req, err := t.request(ctx, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	req.Header["Accept"] = acceptStream
	if lastID != "" {
		req.Header["Last-Event-Id"] = []string{lastID}
	}
	resp, err := t.do(req)
	if err != nil {
		return nil, err
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 == 2 && mt == "text/event-stream" {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	if lastID != "" && resp.StatusCode/100 != 2 {
		// A refused resumption fails the request it was for, not the
		// session.
		return nil, refusal(replyOf(resp))
	}
	if err := t.check(replyOf(resp)); err != nil {
		return nil, err
	}
	return nil, &StatusError{Status: resp.StatusCode, Text: "not an event stream"}
}

// sleep waits d, false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// listenLoop keeps the session's GET stream open for the server's own
// notifications and requests, resuming it when it ends. A server that
// offers none (405) or refuses it with another status is left alone (the
// session goes on without it); one that forgot the session (404), or that
// cannot be reached again, ends the session.
func (t *httpTransport) listenLoop() {
	defer t.listen.Done()
	ctx := t.s.ctx
	st := &stream{readers: &t.readers}
	body, err := t.get(ctx, "")
	for {
		if err != nil {
			if se, ok := err.(*StatusError); ok {
				if se.Status != http.StatusMethodNotAllowed && ctx.Err() == nil {
					t.s.log.Warn("mcpclient: the upstream refuses its GET stream; its own notifications and requests will not arrive", "err", err)
				}
				return
			}
			if ctx.Err() == nil {
				t.s.end(fmt.Errorf("the upstream's GET stream: %w", err))
			}
			return
		}
		_, _ = st.read(body, func(data []byte) bool { return t.s.receive(data, nil) })
		body.Close()
		if ctx.Err() != nil {
			return
		}
		body, err = t.resume(ctx, st)
	}
}

// close ends the GET stream and sends DELETE for the session.
func (t *httpTransport) close() error {
	t.mu.Lock()
	id := t.session
	t.mu.Unlock()
	t.listen.Wait()
	t.drains.Wait()
	if id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := t.request(ctx, http.MethodDelete, nil)
	if err != nil {
		return err
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		return nil // the server is gone: nothing to end there
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return resp.Body.Close()
}
