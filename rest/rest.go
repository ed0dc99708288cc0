// Package rest is the backend for skills of kind rest: it turns a tool call
// into the HTTP request the tool's Request describes, sends it through the
// SSRF guard, and maps the response to a tool result.
//
// The package imports the root mcpgate package, netguard, h1,
// internal/lazyctx and the standard library; it must not import other
// backends, stores or the server.
package rest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/h1"
	"github.com/mcpgate/mcpgate/internal/lazyctx"
	"github.com/mcpgate/mcpgate/netguard"
)

// Options configures a Backend. Nil, or a zero field, gives the default.
type Options struct {
	// LookupEnv finds the secrets that header and query templates refer to
	// as ${env:NAME}, at call time; default os.LookupEnv.
	LookupEnv mcpgate.LookupFunc
	// AllowPrivate lets every skill reach private addresses, as if each had
	// allow_private set; cloud metadata addresses stay refused.
	AllowPrivate bool
	// UserAgent is sent unless a header template sets one; default
	// "mcpgate/" followed by the version.
	UserAgent string
	// Guard holds the HTTP clients; default a new netguard.Guard, whose
	// connections the Backend's calls share.
	Guard *netguard.Guard
	// Files, when set, reads the attachments a multipart body sends.
	Files FileOpener
	// Results, when set, keeps a successful response bigger than the
	// skill's max_response_bytes whole as a file of the caller's user: the
	// result then carries its first part and a resource_link. Without it
	// such a response is cut.
	Results ResultFiles
}

// Backend runs the tools of rest skills. It is safe for concurrent use.
type Backend struct {
	lookup       mcpgate.LookupFunc
	allowPrivate bool
	userAgent    string
	guard        *netguard.Guard
	clients      [2]*http.Client // per policy (strict, private)
	results      ResultFiles
	files        FileOpener
}

var _ mcpgate.Backend = (*Backend)(nil)

// New returns a Backend.
func New(opts *Options) *Backend {
	var o Options
	if opts != nil {
		o = *opts
	}
	b := &Backend{lookup: o.LookupEnv, allowPrivate: o.AllowPrivate, userAgent: o.UserAgent, guard: o.Guard, results: o.Results, files: o.Files}
	if b.lookup == nil {
		b.lookup = os.LookupEnv
	}
	if b.userAgent == "" {
		b.userAgent = "mcpgate/" + mcpgate.Version
	}
	if b.guard == nil {
		b.guard = netguard.New(nil)
	}
	// Plain-HTTP APIs are called over h1, on the calling goroutine
	// (net/http's transport hands each request to a connection's writer
	// goroutine and each response back from its reader goroutine); HTTPS
	// stays on the guard's transport. Both dial through the guard.
	for i, p := range []netguard.Policy{{}, {AllowPrivate: true}} {
		b.clients[i] = h1.Client(b.guard.Client(p), b.guard.Dialer(p))
	}
	return b
}

// client returns the HTTP client of policy p.
func (b *Backend) client(p netguard.Policy) *http.Client {
	if p.AllowPrivate {
		return b.clients[1]
	}
	return b.clients[0]
}

// EndsCallsAtTimeout reports true: CallTool ends a call at its tool's
// timeout, else its skill's, with a result whose Failure is ETIMEOUT, so
// the pipeline sets no deadline of its own.
func (b *Backend) EndsCallsAtTimeout() bool { return true }

// CallTool sends the HTTP request the call's tool describes, filled with the
// call's arguments, and maps the response to a result. Whatever goes wrong
// with the request or the response, an SSRF refusal included, is a result
// with IsError (with Failure set when the API timed out or could not be
// reached); only a call the caller cancels returns an error, ECANCELED.
func (b *Backend) CallTool(ctx context.Context, call *mcpgate.Call) (*mcpgate.Result, error) {
	skill := call.Skill
	if skill == nil {
		skill = &mcpgate.Skill{}
	}
	timeout := callTimeout(ctx, skill, call.Tool.Request)
	// The deadline's context is made only if something waits on it;
	// Cancel stops its timer if it was.
	dl := lazyctx.WithDeadline(ctx, time.Now().Add(timeout))
	defer dl.Cancel(nil)
	ctx = dl
	req, err := b.newRequest(ctx, skill, call)
	if err != nil {
		return mcpgate.ErrorResult("%s", mcpgate.ErrorMessage(err)), nil
	}
	policy := netguard.Policy{AllowPrivate: b.allowPrivate || skill.AllowPrivate}
	if err := policy.Check(req.URL); err != nil {
		closeBody(req.Body) // a multipart body's writer waits for a reader
		return failure(ctx, req.URL.Host, timeout, err)
	}
	resp, err := b.client(policy).Do(req)
	if err != nil {
		return failure(ctx, req.URL.Host, timeout, err)
	}
	defer resp.Body.Close()
	limit := skill.ResponseLimit()
	body, truncated, err := readLimited(resp, limit)
	if err != nil {
		return failure(ctx, req.URL.Host, timeout, err)
	}
	r := newResponse(resp, req.URL, body, truncated, limit)
	if b.spills(call, r) {
		return b.spill(ctx, call, resp, r), nil
	}
	return r.result(call.Tool.OutputSchema), nil
}

// newRequest builds the HTTP request for a call. Its errors carry a code and
// a message for the result.
func (b *Backend) newRequest(ctx context.Context, skill *mcpgate.Skill, call *mcpgate.Call) (*http.Request, error) {
	tr := call.Tool.Request
	if tr == nil {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "tool %q has no request to send", call.Tool.Name)
	}
	a, err := callArgs(call)
	if err != nil {
		return nil, err
	}
	method := requestMethod(tr)
	if !ValidToken(method) {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "method %q is not valid", method)
	}
	e := &expander{args: a, lookup: b.lookup}
	target, err := e.buildURL(skill, tr)
	if err != nil {
		return nil, err
	}
	h, err := e.headers(skill.Headers, tr.Headers)
	if err != nil {
		return nil, err
	}
	body, err := b.requestBody(ctx, call, e, tr.Body, bodyMode(method, tr.Body), h)
	if err != nil {
		return nil, err
	}
	ctx = netguard.WithSecretHeaders(ctx, e.secretHeaders)
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil || req.URL.Host == "" || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		closeBody(body)
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "the request URL %s is not a valid http or https URL", redactURL(target))
	}
	b.setDefaults(h, body != nil)
	call.Trace.SetHeaders(h.Set)
	req.Header = h
	return req, nil
}

// requestBody returns the request's body, nil for none: JSON for every
// mode but multipart, which also sets the Content-Type header.
func (b *Backend) requestBody(ctx context.Context, call *mcpgate.Call, e *expander, rb *mcpgate.RequestBody, mode string, h http.Header) (io.Reader, error) {
	if mode == mcpgate.BodyMultipart {
		body, ctype, err := b.multipartBody(ctx, call, e)
		if err == nil {
			h.Set("Content-Type", ctype)
		}
		return body, err
	}
	raw, err := e.body(mode, rb)
	if err != nil || raw == nil {
		return nil, err
	}
	return bytes.NewReader(raw), nil
}

// closeBody closes a streamed body that will not be sent.
func closeBody(body io.Reader) {
	if c, ok := body.(io.Closer); ok {
		c.Close()
	}
}

// requestMethod returns the request's method in upper case, GET by default.
func requestMethod(tr *mcpgate.Request) string {
	if tr.Method == "" {
		return http.MethodGet
	}
	return strings.ToUpper(tr.Method)
}

// setDefaults sets the headers the templates left unset (or set empty).
// The values share one array: three allocations fewer per call than
// http.Header.Set, and the client only reads them.
func (b *Backend) setDefaults(h http.Header, hasBody bool) {
	vals := make([]string, 0, 3)
	set := func(key, value string) {
		if v := h[key]; len(v) == 0 || v[0] == "" {
			vals = append(vals, value)
			h[key] = vals[len(vals)-1 : len(vals) : len(vals)]
		}
	}
	set("User-Agent", b.userAgent)
	set("Accept", "application/json, */*;q=0.8")
	if hasBody {
		set("Content-Type", "application/json")
	}
}

// callTimeout returns the tool's timeout, else the skill's, shortened to
// the caller's deadline if that comes first.
func callTimeout(ctx context.Context, skill *mcpgate.Skill, tr *mcpgate.Request) time.Duration {
	timeout := skill.CallTimeout()
	if tr != nil && tr.Timeout > 0 {
		timeout = time.Duration(tr.Timeout)
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl).Round(time.Millisecond)
	}
	return timeout
}

// maxPrealloc bounds the buffer readLimited sets aside from a response's
// Content-Length, which the backend may state wrongly; a longer body grows
// the buffer as it arrives.
const maxPrealloc = 1 << 20

// readLimited reads at most limit+1 bytes of the response's body and
// reports whether there was more than limit (newResponse keeps limit). It
// reads into one buffer sized from the Content-Length, without the
// wrappers (bytes.Buffer, io.LimitReader) that cost allocations.
func readLimited(resp *http.Response, limit int64) ([]byte, bool, error) {
	size := int64(512)
	if n := resp.ContentLength; n > 0 {
		size = min(n, limit, maxPrealloc) + 1 // +1: EOF is seen without growing
	}
	b := make([]byte, 0, size)
	for int64(len(b)) <= limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		room := b[len(b):cap(b)]
		if left := limit + 1 - int64(len(b)); int64(len(room)) > left {
			room = room[:left]
		}
		n, err := resp.Body.Read(room)
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, false, nil
		} else if err != nil {
			if int64(len(b)) > limit {
				return b, true, nil // as much as is kept was read
			}
			return b, false, err
		}
	}
	return b, true, nil
}
