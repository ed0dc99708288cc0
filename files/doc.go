// Package files stores uploaded files' bytes and signs the URLs that
// upload and download them. Blobs is the small interface a store of bytes
// implements; Dir keeps them in a directory, content-addressed by SHA-256,
// each written to a temporary file, fsync'd and renamed into place, so a
// reader never sees half a blob. An S3-compatible store can implement
// Blobs later.
//
// Signer makes and checks the tokens of presigned URLs: HMAC-SHA256 over
// the operation, the file ID and the expiry, with a key derived from the
// gateway's OAuth signing keyring in the store (no secret of its own).
//
// It imports the root package and the standard library only; it must not
// import a store implementation, the API or the server.
package files
