package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// lockFile is the file under --data-dir whose lock a serving process on
// SQLite holds.
const lockFile = "serve.lock"

// errLocked is what lockFileAt returns when another process holds the lock.
var errLocked = errors.New("the lock is held by another process")

// lockDataDir takes the data directory's serve lock, when the store is
// SQLite: one process serves a SQLite database (its message service, group
// commit and seq blocks assume it), so a second serve on the same
// directory refuses to start. The lock goes with the process, so a killed
// gateway leaves none behind. It returns what releases the lock.
func (m *Main) lockDataDir() (func() error, error) {
	if m.Config.store.postgresDSN() != "" {
		return func() error { return nil }, nil
	}
	dir := m.Config.store.dataDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	release, err := lockFileAt(path)
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("another mcpgate serve is using the data dir %s (it holds %s): one process serves a SQLite database; "+
			"stop the other, give this one another --data-dir, or run replicas on PostgreSQL (--db)", dir, path)
	} else if err != nil {
		return nil, fmt.Errorf("lock the data dir: %w", err)
	}
	return release, nil
}
