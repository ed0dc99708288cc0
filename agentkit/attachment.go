package agentkit

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/mcpgate/mcpgate"
)

// Attachments returns the files the caller handed to the call: each with
// its ID, name, content type, size and a signed download URL good for a
// few minutes from the call's start.
func (r *Request) Attachments() []mcpgate.Attachment { return r.Message.Body.Attachments }

// OpenAttachment starts reading an attachment's bytes through its signed
// URL. The URL is the credential, so the agent key is not sent. The
// reader yields at most the attachment's declared size; the caller closes
// it.
func (r *Request) OpenAttachment(ctx context.Context, a mcpgate.Attachment) (io.ReadCloser, error) {
	if a.URL == "" {
		return nil, fmt.Errorf("agentkit: attachment %q has no download URL", a.FileID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("agentkit: attachment %q: %w", a.FileID, err)
	}
	resp, err := r.api.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agentkit: download attachment %q: %w", a.FileID, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	if a.Size <= 0 {
		return resp.Body, nil
	}
	return readCloser{io.LimitReader(resp.Body, a.Size), resp.Body}, nil
}

// ReadAttachment returns an attachment's bytes, all in memory: for files
// known to be small. Stream big ones with OpenAttachment.
func (r *Request) ReadAttachment(ctx context.Context, a mcpgate.Attachment) ([]byte, error) {
	rc, err := r.OpenAttachment(ctx, a)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("agentkit: read attachment %q: %w", a.FileID, err)
	}
	if a.Size > 0 && int64(len(b)) != a.Size {
		return nil, fmt.Errorf("agentkit: attachment %q: got %d bytes of %d", a.FileID, len(b), a.Size)
	}
	return b, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
