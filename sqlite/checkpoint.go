package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Checkpoints. In WAL mode a commit appends the pages it changed to the
// -wal file, and a checkpoint copies them back into the database file,
// syncing both. SQLite checkpoints by itself in the commit that takes the
// log past wal_autocheckpoint pages (1,000 by default), so one post in
// every few dozen paid for it on its caller's time: under the agent round
// trip's load that was 34 checkpoints a second, each holding the one
// writer for the copy and two fsyncs while every other post queued behind
// it. Instead a checkpointer with a connection of its own copies the log
// in the background every checkpointInterval (a PASSIVE checkpoint, which
// never waits for the writer or the readers, nor makes them wait), and the
// writer's own checkpoint is left as a backstop for a log that still grows
// past walBackstopPages: a checkpoint that runs while posts keep coming
// leaves the newest frames behind, and SQLite starts the log over only
// when every frame was copied, which the writer's checkpoint, run between
// its transactions, can do.

// checkpointInterval is how often the checkpointer copies the log.
const checkpointInterval = 250 * time.Millisecond

// walBackstopPages is the writer's wal_autocheckpoint: the log's length,
// in pages (of 4 KiB), past which a commit checkpoints by itself.
const walBackstopPages = 10000

// checkpointer copies the log into the database file in the background,
// until stopped.
type checkpointer struct {
	db   *sql.DB
	stop chan struct{}
	done chan struct{}
}

// startCheckpointer opens the checkpointer's connection to path and starts
// it.
func startCheckpointer(ctx context.Context, path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open %s for checkpoints: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open %s for checkpoints: %w", path, err)
	}
	c := &checkpointer{db: db, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// run checkpoints every checkpointInterval until stopped. A checkpoint
// that fails is left to the next one, and to the writer's backstop.
func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			_ = c.checkpoint()
		}
	}
}

// checkpoint runs one PASSIVE checkpoint. Its row (busy, the log's length
// and how much of it is copied) says nothing the checkpointer acts on.
func (c *checkpointer) checkpoint() error {
	_, err := c.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
	return err
}

// Close stops the checkpointer and closes its connection.
func (c *checkpointer) Close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}
