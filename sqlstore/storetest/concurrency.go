package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func concurrencyTests() []test {
	return []test{{"Writers", testConcurrentWriters}}
}

// testConcurrentWriters has 8 goroutines create keys, touch them and their
// sessions, read them back and put one shared skill in transactions, all at
// once: none may fail, SQLite's single writer included ("database is
// locked"), and PostgreSQL's concurrent transactions must not deadlock.
func testConcurrentWriters(t *testing.T, s mcpgate.Store) {
	const workers, rounds = 8, 25
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		session := mustSession(t, s, fmt.Sprintf("sess-%d", w), "weather")
		wg.Go(func() {
			errs <- writeAndRead(ctx, s, u.ID, session, w, rounds)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	keys, err := s.ListKeys(ctx, mcpgate.KeyFilter{UserID: u.ID})
	must(t, err)
	mustEqual(t, "keys", len(keys), workers*rounds)
	for _, k := range keys {
		if k.LastUsedAt == nil {
			t.Fatalf("key %s was never touched", k.ID)
		}
	}
	sk, err := s.FindSkill(ctx, "weather", "shared")
	must(t, err)
	mustEqual(t, "tools", toolNames(sk), []string{"today", "alerts", "batch"})
}

// writeAndRead is one worker of testConcurrentWriters.
func writeAndRead(ctx context.Context, s mcpgate.Store, userID string, ss *mcpgate.Session, w, rounds int) error {
	for i := range rounds {
		k := &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: userID, Hash: fmt.Sprintf("hash-%d-%d", w, i), Hint: "oag_"}
		if err := s.CreateKey(ctx, k); err != nil {
			return fmt.Errorf("worker %d: create key: %w", w, err)
		}
		if err := s.TouchKey(ctx, k.ID, time.Now()); err != nil {
			return fmt.Errorf("worker %d: touch key: %w", w, err)
		}
		if err := s.TouchSession(ctx, ss.ID, time.Now()); err != nil {
			return fmt.Errorf("worker %d: touch session: %w", w, err)
		}
		if _, err := s.FindKeyByHash(ctx, k.Hash); err != nil {
			return fmt.Errorf("worker %d: find key: %w", w, err)
		}
		if _, err := s.FindSession(ctx, ss.ID); err != nil {
			return fmt.Errorf("worker %d: find session: %w", w, err)
		}
		if err := putInTx(ctx, s, ss.AgentID, k.ID, w, i); err != nil {
			return fmt.Errorf("worker %d: %w", w, err)
		}
	}
	return nil
}

// putInTx puts the skill every worker shares, changed, and touches a key,
// in one transaction.
func putInTx(ctx context.Context, s mcpgate.Store, agentID, keyID string, w, i int) error {
	return s.Tx(ctx, func(tx mcpgate.Store) error {
		sk := sampleSkill(agentID, "shared")
		sk.Tools[0].Description = fmt.Sprintf("put by worker %d in round %d", w, i)
		if err := tx.PutSkill(ctx, sk); err != nil {
			return fmt.Errorf("put skill: %w", err)
		}
		return tx.TouchKey(ctx, keyID, time.Now())
	})
}
