package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate"
)

// Presigned URL lifetimes: an upload URL must be used within uploadTTL, a
// download URL within downloadTTL; a file not uploaded by pendingTTL may be
// swept.
const (
	uploadTTL   = 15 * time.Minute
	downloadTTL = 5 * time.Minute
	pendingTTL  = time.Hour
)

// DefaultMaxUploadBytes is the largest upload accepted by default: 100 MiB.
const DefaultMaxUploadBytes = 100 << 20

// Blobs stores file bytes under their SHA-256 (files.Blobs).
type Blobs interface {
	Put(ctx context.Context, r io.Reader, max int64) (sum string, n int64, err error)
	Open(ctx context.Context, sum string) (io.ReadSeekCloser, error)
}

// URLSigner signs and checks presigned file URL tokens (files.Signer).
type URLSigner interface {
	// Sign returns a token allowing op ("put" or "get") on a file for ttl,
	// and when it expires.
	Sign(ctx context.Context, op, fileID string, ttl time.Duration) (string, time.Time, error)
	// Verify returns the file ID a valid, unexpired token for op allows;
	// EFORBIDDEN otherwise.
	Verify(ctx context.Context, token, op string) (string, error)
}

// presignRequest is the body of POST /files/presign-upload.
type presignRequest struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// filesReady returns EUNAVAILABLE when the gateway stores no files.
func (s *Server) filesReady() error {
	if s.opts.Blobs == nil || s.opts.Signer == nil {
		return &apiError{Err: mcpgate.Errorf(mcpgate.EUNAVAILABLE, "this gateway stores no files"), Status: http.StatusServiceUnavailable}
	}
	return nil
}

// handleFilePresign makes a pending file owned by the caller's user (an
// agent key's agent's owner) and answers its single-use upload URL.
func (s *Server) handleFilePresign(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.filesReady(); err != nil {
		return err
	}
	var req presignRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := s.checkPresign(&req); err != nil {
		return err
	}
	f := &mcpgate.File{ID: mcpgate.NewID("file_"), UserID: c.user.ID, Filename: req.Filename, ContentType: req.ContentType,
		Size: req.Size, Status: mcpgate.FilePending, ExpiresAt: time.Now().Add(pendingTTL)}
	if err := s.opts.Store.CreateFile(r.Context(), f); err != nil {
		return err
	}
	tok, exp, err := s.opts.Signer.Sign(r.Context(), "put", f.ID, uploadTTL)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"file_id": f.ID, "upload_url": mcpgate.FileContentURL(s.opts.PublicURL, f.ID, tok), "expires_at": exp})
	return nil
}

// checkPresign checks a presign request and fills in a default content type.
func (s *Server) checkPresign(req *presignRequest) error {
	switch {
	case req.Filename == "" || len(req.Filename) > 255:
		return fieldErrorf(mcpgate.EINVALID, "filename", "filename must be 1 to 255 bytes")
	case req.Size <= 0:
		return fieldErrorf(mcpgate.EINVALID, "size", "size must be the file's size in bytes, at least 1")
	case req.Size > s.maxUpload():
		return fieldErrorf(mcpgate.ETOOLARGE, "size", "size %d is over this gateway's upload limit of %d bytes", req.Size, s.maxUpload())
	}
	if req.ContentType == "" {
		req.ContentType = "application/octet-stream"
	}
	return nil
}

// maxUpload is the upload cap.
func (s *Server) maxUpload() int64 {
	if s.opts.MaxUploadBytes > 0 {
		return s.opts.MaxUploadBytes
	}
	return DefaultMaxUploadBytes
}

// handleFileUpload stores the bytes of a presigned upload. The token is
// used once: the file moves from pending to uploading before a byte is
// read. The body streams to the blob store, at most the declared size.
func (s *Server) handleFileUpload(w http.ResponseWriter, r *http.Request) error {
	f, err := s.fileByToken(r, "put")
	if err != nil {
		return err
	}
	if r.ContentLength > f.Size {
		return mcpgate.Errorf(mcpgate.ETOOLARGE, "the body is %d bytes; %d were declared", r.ContentLength, f.Size)
	}
	if err := s.opts.Store.MoveFile(r.Context(), f.ID, mcpgate.FilePending, mcpgate.FileUploading, ""); err != nil {
		if mcpgate.ErrorCode(err) == mcpgate.ECONFLICT {
			return mcpgate.Errorf(mcpgate.ECONFLICT, "this upload URL was used already; presign another")
		}
		return err
	}
	sum, err := s.storeUpload(r, f)
	ctx := context.WithoutCancel(r.Context())
	if err != nil {
		return errors.Join(err, s.opts.Store.MoveFile(ctx, f.ID, mcpgate.FileUploading, mcpgate.FileFailed, ""))
	}
	if err := s.opts.Store.MoveFile(ctx, f.ID, mcpgate.FileUploading, mcpgate.FileReady, sum); err != nil {
		return err
	}
	f.Status, f.SHA256 = mcpgate.FileReady, sum
	writeJSON(w, http.StatusOK, f)
	return nil
}

// storeUpload streams the body into the blob store and checks its size.
func (s *Server) storeUpload(r *http.Request, f *mcpgate.File) (string, error) {
	sum, n, err := s.opts.Blobs.Put(r.Context(), r.Body, f.Size)
	switch {
	case err != nil:
		return "", err
	case n != f.Size:
		return "", mcpgate.Errorf(mcpgate.EINVALID, "the body is %d bytes; %d were declared", n, f.Size)
	}
	return sum, nil
}

// fileByToken returns the file the request's token allows op on.
func (s *Server) fileByToken(r *http.Request, op string) (*mcpgate.File, error) {
	if err := s.filesReady(); err != nil {
		return nil, err
	}
	id, err := s.opts.Signer.Verify(r.Context(), r.URL.Query().Get("token"), op)
	if err != nil {
		return nil, err
	}
	if id != r.PathValue("id") {
		return nil, mcpgate.Errorf(mcpgate.EFORBIDDEN, "the file URL's token is for another file")
	}
	return s.opts.Store.FindFile(r.Context(), id)
}

// handleFileDownload serves a ready file's bytes by a signed URL.
func (s *Server) handleFileDownload(w http.ResponseWriter, r *http.Request) error {
	f, err := s.fileByToken(r, "get")
	if err != nil {
		return err
	}
	if !f.Ready() {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q has no bytes yet", f.ID)
	}
	blob, err := s.opts.Blobs.Open(r.Context(), f.SHA256)
	if err != nil {
		return err
	}
	defer blob.Close()
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Disposition", "attachment")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, "", f.CreatedAt, blob)
	return nil
}

// handleFileGet answers a file's metadata and, once it is ready, a signed
// download URL good for a few minutes. Another user's file is ENOTFOUND.
func (s *Server) handleFileGet(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.filesReady(); err != nil {
		return err
	}
	f, err := s.opts.Store.FindFile(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if f.UserID != c.user.ID && !c.isAdmin() {
		return mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q not found", f.ID)
	}
	out := map[string]any{"file": f}
	if f.Ready() {
		tok, exp, err := s.opts.Signer.Sign(r.Context(), "get", f.ID, downloadTTL)
		if err != nil {
			return err
		}
		out["download_url"], out["download_expires_at"] = mcpgate.FileContentURL(s.opts.PublicURL, f.ID, tok), exp
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
