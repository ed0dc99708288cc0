package sqlstore

import (
	"bytes"
	"embed"
	"io"
	"io/fs"
)

// The migrations are written once, in the SQL both engines accept. The one
// difference is collation: PostgreSQL compares text by the database's
// locale unless told otherwise, so identifiers and names are declared
// COLLATE "C" to sort bytewise there, which is what SQLite does by default
// and which SQLite does not know by that name. Migrations for SQLite are the
// same files with that clause taken out.
//
//go:embed migrations/*.sql
var migrations embed.FS

// collateC is the clause the SQLite migrations leave out.
var collateC = []byte(` COLLATE "C"`)

// Migrations returns the goose migrations for an engine: "postgres" gets the
// files as written, any other engine (SQLite) gets them without COLLATE "C".
func Migrations(engine string) fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	if engine == "postgres" {
		return sub
	}
	return withoutCollation{sub}
}

// withoutCollation serves its files with every COLLATE "C" clause removed.
type withoutCollation struct{ fs.FS }

// Open opens name and, for a regular file, returns its rewritten content.
func (w withoutCollation) Open(name string) (fs.File, error) {
	f, err := w.FS.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		return f, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, collateC, nil)
	return &memFile{Reader: bytes.NewReader(b), info: sizedInfo{info, int64(len(b))}}, nil
}

// ReadDir lists the folder, which the rewrite does not change.
func (w withoutCollation) ReadDir(name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(w.FS, name)
}

// memFile is a rewritten migration held in memory.
type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

// sizedInfo reports a file's rewritten size.
type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }
