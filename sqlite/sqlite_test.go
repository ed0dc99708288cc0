package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/sqlite"
	"github.com/mcpgate/mcpgate/sqlstore"
	"github.com/mcpgate/mcpgate/sqlstore/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) mcpgate.Store {
		return mustOpen(t, filepath.Join(t.TempDir(), "mcpgate.db"))
	})
}

// mustOpen opens the database at path, closing it when the test ends.
func mustOpen(tb testing.TB, path string) *sqlstore.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}
