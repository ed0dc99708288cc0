package files

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate"
)

// Limits of Results: the largest result stored as a file by default, and
// the largest file resources/read answers inline (bigger ones are read by
// their download URL).
const (
	DefaultMaxResultBytes = 100 << 20
	MaxReadBytes          = 64 << 20
)

// FileKeeper creates and reads file metadata (mcpgate.FileStore).
type FileKeeper interface {
	CreateFile(ctx context.Context, f *mcpgate.File) error
	FindFile(ctx context.Context, id string) (*mcpgate.File, error)
}

// Results keeps tool results too big to return whole as files of the
// caller's user (rest.ResultFiles), reads the gateway's files back for
// resources/read (gateway.FileReader), and opens attachments for REST
// multipart bodies (rest.FileOpener).
type Results struct {
	Files  FileKeeper
	Blobs  Blobs
	Signer *Signer
	// PublicURL is the gateway's base URL, for download URLs.
	PublicURL string
	// Max is the largest result stored (default DefaultMaxResultBytes).
	Max int64
}

// StoreResult streams body into a new ready file of user userID and
// returns a resource_link block to it carrying a signed download URL.
// More than Max bytes is ETOOLARGE and nothing is kept.
func (r *Results) StoreResult(ctx context.Context, userID, name, mimeType string, body io.Reader) (mcpgate.Content, error) {
	max := r.Max
	if max <= 0 {
		max = DefaultMaxResultBytes
	}
	sum, n, err := r.Blobs.Put(ctx, body, max)
	if err != nil {
		return mcpgate.Content{}, err
	}
	f := &mcpgate.File{ID: mcpgate.NewID("file_"), UserID: userID, Filename: name, ContentType: mimeType,
		Size: n, SHA256: sum, Status: mcpgate.FileReady, ExpiresAt: time.Now()}
	if err := r.Files.CreateFile(ctx, f); err != nil {
		return mcpgate.Content{}, fmt.Errorf("store result file: %w", err)
	}
	tok, _, err := r.Signer.Sign(ctx, OpDownload, f.ID, DownloadTTL)
	if err != nil {
		return mcpgate.Content{}, err
	}
	return mcpgate.FileLink(f, mcpgate.FileContentURL(r.PublicURL, f.ID, tok)), nil
}

// resourceContents is one entry of resources/read's result.
type resourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// ReadResource answers resources/read of uri, a FileURI, for user userID:
// the file's bytes as text (a textual type, valid UTF-8) or a base64
// blob. A file that is missing, another user's or not ready is ENOTFOUND;
// one over MaxReadBytes is ETOOLARGE.
func (r *Results) ReadResource(ctx context.Context, userID, uri string) (json.RawMessage, error) {
	f, err := r.Files.FindFile(ctx, strings.TrimPrefix(uri, mcpgate.FileURIPrefix))
	if err != nil || f.UserID != userID || !f.Ready() {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "resource %q not found", uri)
	}
	if f.Size > MaxReadBytes {
		return nil, mcpgate.Errorf(mcpgate.ETOOLARGE, "resource %q is %d bytes, more than resources/read returns (%d); GET /api/v1/files/%s gives a download URL", uri, f.Size, MaxReadBytes, f.ID)
	}
	blob, err := r.Blobs.Open(ctx, f.SHA256)
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	b, err := io.ReadAll(io.LimitReader(blob, f.Size))
	if err != nil {
		return nil, fmt.Errorf("read file %s: %w", f.ID, err)
	}
	c := resourceContents{URI: uri, MimeType: f.ContentType}
	if textual(f.ContentType) && utf8.Valid(b) {
		c.Text = string(b)
	} else {
		c.Blob = base64.StdEncoding.EncodeToString(b)
	}
	return json.Marshal(map[string][]resourceContents{"contents": {c}})
}

// textual reports whether a content type holds text.
func textual(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}

// OpenFile opens the bytes of a ready file of user userID, for a REST
// request's multipart body: ENOTFOUND when it is missing, another user's
// or not uploaded.
func (r *Results) OpenFile(ctx context.Context, userID, fileID string) (io.ReadCloser, error) {
	f, err := r.Files.FindFile(ctx, fileID)
	if err != nil || f.UserID != userID || !f.Ready() {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q not found", fileID)
	}
	return r.Blobs.Open(ctx, f.SHA256)
}
