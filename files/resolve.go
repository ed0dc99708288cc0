package files

import (
	"context"
	"time"

	"github.com/mcpgate/mcpgate"
)

// DownloadTTL is how long a signed download URL handed to a backend lasts.
const DownloadTTL = 5 * time.Minute

// FileFinder reads file metadata (mcpgate.FileStore).
type FileFinder interface {
	FindFile(ctx context.Context, id string) (*mcpgate.File, error)
}

// Resolver checks files handed to tool calls and signs their download
// URLs (the pipeline's AttachmentResolver).
type Resolver struct {
	Files  FileFinder
	Signer *Signer
	// PublicURL is the gateway's base URL.
	PublicURL string
}

// Resolve returns the attachment of a file the user owns and uploaded:
// ENOTFOUND when it is missing or another user's, EINVALID when not
// uploaded.
func (r *Resolver) Resolve(ctx context.Context, userID, fileID string) (*mcpgate.Attachment, error) {
	f, err := r.Files.FindFile(ctx, fileID)
	if err != nil {
		return nil, err
	}
	if f.UserID != userID {
		return nil, mcpgate.Errorf(mcpgate.ENOTFOUND, "file %q not found", fileID)
	}
	if !f.Ready() {
		return nil, mcpgate.Errorf(mcpgate.EINVALID, "file %q is %s, not uploaded", fileID, f.Status)
	}
	tok, _, err := r.Signer.Sign(ctx, OpDownload, f.ID, DownloadTTL)
	if err != nil {
		return nil, err
	}
	return &mcpgate.Attachment{FileID: f.ID, Name: f.Filename, MimeType: f.ContentType, Size: f.Size, URL: mcpgate.FileContentURL(r.PublicURL, f.ID, tok)}, nil
}
