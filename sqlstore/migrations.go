package sqlstore

import (
	"bytes"
	"embed"
	"io"
	"io/fs"
)

// The migrations are written once, in the SQL both engines accept. Two
// things differ. Collation: PostgreSQL compares text by the database's
// locale unless told otherwise, so identifiers and names are declared
// COLLATE "C" to sort bytewise there, which is what SQLite does by default
// and which SQLite does not know by that name; SQLite's files have that
// clause taken out. And indexes that suit one engine only: the lines
// between "-- +mcpgate sqlite" (or "-- +mcpgate postgres") and
// "-- +mcpgate end" are left out of the other engine's files, whose
// migration of that version then changes nothing.
//
//go:embed migrations/*.sql
var migrations embed.FS

// collateC is the clause the SQLite migrations leave out.
var collateC = []byte(` COLLATE "C"`)

// Migrations returns the goose migrations for an engine: "postgres" gets the
// files as written but for SQLite's blocks, any other engine (SQLite) gets
// them without COLLATE "C" and PostgreSQL's blocks.
func Migrations(engine string) fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	if engine == "postgres" {
		return rewritten{sub, func(b []byte) []byte { return withoutBlocks(b, "sqlite") }}
	}
	return rewritten{sub, func(b []byte) []byte {
		return bytes.ReplaceAll(withoutBlocks(b, "postgres"), collateC, nil)
	}}
}

// withoutBlocks returns b without the lines from "-- +mcpgate ENGINE" to
// the next "-- +mcpgate end", both included.
func withoutBlocks(b []byte, engine string) []byte {
	start, end := []byte("-- +mcpgate "+engine), []byte("-- +mcpgate end")
	var out []byte
	skip := false
	for line := range bytes.Lines(b) {
		trimmed := bytes.TrimSpace(line)
		switch {
		case !skip && bytes.Equal(trimmed, start):
			skip = true
		case skip && bytes.Equal(trimmed, end):
			skip = false
		case !skip:
			out = append(out, line...)
		}
	}
	return out
}

// rewritten serves its files through rewrite.
type rewritten struct {
	fs.FS
	rewrite func([]byte) []byte
}

// Open opens name and, for a regular file, returns its rewritten content.
func (w rewritten) Open(name string) (fs.File, error) {
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
	b = w.rewrite(b)
	return &memFile{Reader: bytes.NewReader(b), info: sizedInfo{info, int64(len(b))}}, nil
}

// ReadDir lists the folder, which the rewrite does not change.
func (w rewritten) ReadDir(name string) ([]fs.DirEntry, error) {
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
