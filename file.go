package mcpgate

import (
	"context"
	"encoding/json"
	"time"
)

// File states: a file is pending from its presigned upload until its one
// upload starts, uploading while the bytes stream in, then ready, or failed
// when the upload broke off or did not match what was declared.
const (
	FilePending   = "pending"
	FileUploading = "uploading"
	FileReady     = "ready"
	FileFailed    = "failed"
)

// File is a file a user uploaded to hand to agents and tools as an
// attachment. Its bytes live in a blob store under their SHA-256; the
// database holds only this.
type File struct {
	ID string `json:"id"`
	// UserID owns the file: the uploading key's user, or the owner of the
	// agent an agent key belongs to.
	UserID      string `json:"user_id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	// Size is the declared size, which the upload must match.
	Size int64 `json:"size"`
	// SHA256 is the hex digest of the bytes, the blob's key; "" until
	// the file is ready.
	SHA256    string    `json:"sha256,omitempty"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt is when a file that is not ready may be swept.
	ExpiresAt time.Time `json:"expires_at"`
}

// Ready reports whether the file's bytes are stored.
func (f *File) Ready() bool { return f.Status == FileReady }

// FileStore keeps file metadata.
type FileStore interface {
	// CreateFile stores f, setting CreatedAt. Returns ECONFLICT if the ID
	// exists.
	CreateFile(ctx context.Context, f *File) error
	// FindFile returns a file; ENOTFOUND if none.
	FindFile(ctx context.Context, id string) (*File, error)
	// MoveFile changes a file's status from `from` to `to`, and its
	// SHA256 to sha when sha is not empty, in one step that succeeds
	// once: ECONFLICT when the file is not in status `from`, ENOTFOUND
	// when there is no such file. It is what makes an upload URL single
	// use.
	MoveFile(ctx context.Context, id, from, to, sha string) error
	// SweepFiles deletes at most limit files that are due and returns
	// them: files not ready whose ExpiresAt is before now (reservations
	// never used, uploads never completed, failed ones), and ready files
	// created before readyBefore (past the retention).
	SweepFiles(ctx context.Context, now, readyBefore time.Time, limit int) ([]*File, error)
	// FileBlobInUse reports whether a file has the SHA-256 sum, so that
	// its blob must stay.
	FileBlobInUse(ctx context.Context, sum string) (bool, error)
}

// FileContentURL is the presigned URL of a file's bytes, which the
// management API serves: token allows one operation on the file (see
// files.Signer).
func FileContentURL(publicURL, fileID, token string) string {
	return publicURL + "/api/v1/files/" + fileID + "/content?token=" + token
}

// FileURIPrefix starts the URI of a file the gateway stores, in
// resource_link blocks and resources/read: FileURIPrefix + the file's ID.
const FileURIPrefix = "mcpgate://files/"

// FileURI returns the URI of a stored file.
func FileURI(fileID string) string { return FileURIPrefix + fileID }

// FileLink returns a resource_link block to f, with its signed download
// URL, when not empty, in _meta as "mcpgate/download_url".
func FileLink(f *File, downloadURL string) Content {
	c := Content{Type: "resource_link", URI: FileURI(f.ID), Name: f.Filename, MimeType: f.ContentType, Size: f.Size}
	if downloadURL != "" {
		c.Meta, _ = json.Marshal(map[string]string{"mcpgate/download_url": downloadURL})
	}
	return c
}
