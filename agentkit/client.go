package agentkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// StatusError is a refusal of the gateway's API: its HTTP status and the
// message of its JSON error body.
type StatusError struct {
	StatusCode int
	Message    string
}

// Error says which status the gateway answered, and why.
func (e *StatusError) Error() string {
	return fmt.Sprintf("agentkit: gateway answered %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// permanent reports whether retrying cannot help: the key is wrong or
// has no right to the inbox.
func (e *StatusError) permanent() bool {
	return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
}

// client calls the gateway's agent API with the agent key.
type client struct {
	base string // without a trailing slash
	key  string
	hc   *http.Client
}

// newRequest builds a request to path with the key and a JSON body.
func (c *client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	if c.base == "" {
		return nil, fmt.Errorf("agentkit: %s %s: Options.URL is not set", method, path)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("agentkit: encode %s body: %w", path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("agentkit: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do sends a request and decodes a JSON answer of status want into out.
func (c *client) do(ctx context.Context, method, path string, body any, want int, out any) error {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("agentkit: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return statusError(resp)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("agentkit: decode %s %s: %w", method, path, err)
	}
	return nil
}

// statusError reads an error answer: {"error": {"message": …}} or
// {"error": "…"} or {"message": …}, else the raw text.
func statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	var shaped struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &shaped) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(shaped.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(shaped.Error, &s) == nil && s != "":
			msg = s
		case shaped.Message != "":
			msg = shaped.Message
		}
	}
	return &StatusError{StatusCode: resp.StatusCode, Message: msg}
}

// post stores a message on a channel. The gateway answers with the
// message as stored, which no caller needs: it is read, not decoded.
func (c *client) post(ctx context.Context, channelID string, m *outgoing) error {
	return c.do(ctx, http.MethodPost, messagesPath(channelID), m, http.StatusCreated, nil)
}

// messagesPath is the path of a channel's messages.
func messagesPath(channelID string) string {
	return "/api/v1/channels/" + url.PathEscape(channelID) + "/messages"
}

// ack acknowledges messages, so they are not delivered again.
func (c *client) ack(ctx context.Context, ids ...string) error {
	body := map[string][]string{"ids": ids}
	return c.do(ctx, http.MethodPost, "/api/v1/agent/inbox/ack", body, http.StatusNoContent, nil)
}

// list returns up to limit of a channel's messages after seq.
func (c *client) list(ctx context.Context, channelID string, after int64, limit int) ([]*mcpgate.Message, error) {
	var page struct {
		Messages []*mcpgate.Message `json:"messages"`
	}
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	if err := c.do(ctx, http.MethodGet, messagesPath(channelID)+"?"+q.Encode(), nil, http.StatusOK, &page); err != nil {
		return nil, err
	}
	return page.Messages, nil
}

// openInbox starts the inbox stream, resuming after lastSeq when > 0.
func (c *client) openInbox(ctx context.Context, skill string, lastSeq int64) (*http.Response, error) {
	path := "/api/v1/agent/inbox"
	if skill != "" {
		path += "?skill=" + url.QueryEscape(skill)
	}
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastSeq > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastSeq, 10))
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agentkit: open inbox: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp, nil
}
