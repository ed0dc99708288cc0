// Package sqlstore implements mcpgate.Store once, over database/sql, for
// every SQL engine the gateway supports. The SQL is written once in the
// dialect both SQLite and PostgreSQL accept ($1 placeholders, INSERT … ON
// CONFLICT … DO UPDATE, RETURNING); what differs between engines, such as how
// a constraint violation is reported, comes in through a Dialect.
//
// Times are stored as BIGINT Unix microseconds and returned in UTC.
//
// The package must not import a database driver, nor any mcpgate package
// other than the root one: the sqlite and postgres packages open the pools,
// run their migrations and hand them to New.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/internal/batch"
)

var _ mcpgate.Store = (*Store)(nil)

// Store is an mcpgate.Store over a reader and a writer database/sql pool,
// or, inside Tx, over one transaction.
type Store struct {
	read  querier // the reader pool, or the transaction
	write querier // the writer pool, or the transaction
	d     Dialect

	readDB, writeDB *sql.DB // nil inside a transaction
	inTx            bool
	hot             hotStatements // nil inside a transaction
	hotWrite        hotStatements // prepared on the writer; nil inside a transaction
	// readStmts and writeStmts cache the statements run on each pool (see
	// stmtcache.go); nil when the driver caches them itself.
	readStmts, writeStmts *stmtCache
	// group batches concurrent posts into one transaction (group.go); nil
	// on an engine that does not, and inside a transaction.
	group *batch.Queue[*groupOp]
	// seqs are the agents' seqs reserved for posts (seqblock.go), shared
	// by the Store's transactions; nil on an engine without group commit.
	seqs *seqBlocks
	// inbox is what the Store knows of its agents' inboxes without
	// reading them (inboxstate.go), shared by its transactions; nil on an
	// engine without group commit.
	inbox *inboxState
	// open is the writer's transaction left open by posts that returned
	// before it committed (open.go); nil when none is.
	open *openTx
	// commitDelay, when set (tests), replaces defaultCommitDelay.
	commitDelay time.Duration
	// unsettled is set while a transaction is open, and from the moment
	// a message is handed over before its statements run (PostHandedFirst),
	// for the readers (settle).
	unsettled atomic.Bool
	// closers are closed by Close before the pools (OnClose).
	closers []io.Closer
	// closeOnce runs Close's work once; closeErr is its outcome.
	closeOnce sync.Once
	closeErr  error
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// New returns a Store that reads through read and writes through write,
// and prepares its hot-path queries on read. The pools must hold the schema
// of the engine's migrations. For SQLite, write is a pool of exactly one
// connection and read a separate read-only pool; for PostgreSQL both are the
// same pool. Close closes both.
func New(ctx context.Context, read, write *sql.DB, d Dialect) (*Store, error) {
	hot, err := prepareHot(ctx, read, hotQueries())
	if err != nil {
		return nil, err
	}
	hotWrite, err := prepareHot(ctx, write, hotWrites())
	if err != nil {
		_ = hot.close()
		return nil, err
	}
	s := &Store{read: read, write: write, d: d, readDB: read, writeDB: write, hot: hot, hotWrite: hotWrite}
	s.cacheStatements()
	if groupsCommits(d) {
		s.group, s.seqs, s.inbox = &batch.Queue[*groupOp]{}, &seqBlocks{}, newInboxState()
	}
	return s, nil
}

// Tx runs fn with a Store bound to one transaction on the writer: its reads
// and writes all go through the transaction, which is committed when fn
// returns nil and rolled back otherwise. Calling Tx on that Store runs fn in
// the same transaction. fn must not use the outer Store: on SQLite, whose
// writer has one connection, that would wait for the transaction forever.
// After a method fails inside fn, fn should return the error: PostgreSQL
// refuses further statements in a transaction that had an error.
func (s *Store) Tx(ctx context.Context, fn func(tx mcpgate.Store) error) error {
	return s.withTx(ctx, func(tx *Store) error { return fn(tx) })
}

// withTx runs fn with s when s is already a transaction, and with a new
// transaction on the writer otherwise.
func (s *Store) withTx(ctx context.Context, fn func(tx *Store) error) error {
	if s.inTx {
		return fn(s)
	}
	s.settle()
	tx, err := s.writeDB.BeginTx(s.beginContext(ctx), nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			s.inbox.forget()
			panic(p)
		}
	}()
	var missed []string
	if err := fn(s.txStore(tx, &missed)); err != nil {
		_ = tx.Rollback() // fn's error is the one that matters
		s.inbox.forget()
		s.prepareMissed(ctx, missed)
		return err
	}
	err = tx.Commit()
	s.prepareMissed(ctx, missed)
	if err != nil {
		s.inbox.forget()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// beginContext is the context a transaction begins with: detached from
// ctx's cancellation on an engine whose statements are cached here
// (SQLite), whose driver would otherwise start a goroutine to watch it;
// its statements are detached likewise (cachedTx).
func (s *Store) beginContext(ctx context.Context) context.Context {
	if s.writeStmts == nil {
		return ctx
	}
	return detach(ctx)
}

// prepareMissed prepares on the writer the queries a transaction ran that
// its cache did not hold; it must run after the transaction ended, which
// held the writer's connection.
func (s *Store) prepareMissed(ctx context.Context, missed []string) {
	if s.writeStmts != nil && len(missed) > 0 {
		s.writeStmts.prepare(context.WithoutCancel(ctx), missed)
	}
}

// txStore returns the Store of the transaction tx, which notes in missed
// the queries it ran that the writer's cache did not hold yet.
func (s *Store) txStore(tx *sql.Tx, missed *[]string) *Store {
	if s.writeStmts == nil {
		return &Store{read: tx, write: tx, d: s.d, inTx: true, seqs: s.seqs, inbox: s.inbox}
	}
	q := newCachedTx(tx, s.writeStmts, missed)
	return &Store{read: q, write: q, d: s.d, inTx: true, seqs: s.seqs, inbox: s.inbox}
}

// Generation returns the counter that every change to agents, skills or
// tools increments.
func (s *Store) Generation(ctx context.Context) (int64, error) {
	var g int64
	err := s.read.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = 'generation'`).Scan(&g)
	if err != nil {
		return 0, fmt.Errorf("read generation: %w", err)
	}
	return g, nil
}

// bumpGeneration increments the generation; callers run it in the
// transaction of the change it announces.
func (s *Store) bumpGeneration(ctx context.Context) error {
	_, err := s.write.ExecContext(ctx, `UPDATE meta SET value = value + 1 WHERE name = 'generation'`)
	if err != nil {
		return fmt.Errorf("bump generation: %w", err)
	}
	return nil
}

// Ping checks that both pools answer. Inside a transaction it does nothing.
func (s *Store) Ping(ctx context.Context) error {
	if s.inTx {
		return nil
	}
	s.settle()
	if err := s.writeDB.PingContext(ctx); err != nil {
		return fmt.Errorf("ping writer: %w", err)
	}
	if err := s.readDB.PingContext(ctx); err != nil {
		return fmt.Errorf("ping reader: %w", err)
	}
	return nil
}

// OnClose has Close close c, before the Store's pools: something of the
// engine's package that lives as long as the Store, like SQLite's
// checkpointer. Call it before the Store is in use.
func (s *Store) OnClose(c io.Closer) {
	s.closers = append(s.closers, c)
}

// Close closes the prepared statements and both pools. Inside a
// transaction it does nothing: the transaction ends when Tx returns.
// Closing again does nothing and returns the first Close's error.
func (s *Store) Close() error {
	if s.inTx {
		return nil
	}
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

// close is Close's work.
func (s *Store) close() error {
	s.settle() // commit what posts left open
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c.Close())
	}
	errs = append(errs, s.hot.close(), s.hotWrite.close())
	if s.readStmts != nil {
		errs = append(errs, s.readStmts.close(), s.writeStmts.close())
	}
	errs = append(errs, s.writeDB.Close())
	if s.readDB != s.writeDB {
		errs = append(errs, s.readDB.Close())
	}
	return errors.Join(errs...)
}

// now returns the current time as the store keeps it: UTC, in whole
// microseconds.
func now() time.Time { return normalize(time.Now()) }
