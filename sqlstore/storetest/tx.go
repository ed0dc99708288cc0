package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpgate/mcpgate"
)

func txTests() []test {
	return []test{
		{"Commit", testTxCommit},
		{"Rollback", testTxRollback},
		{"RollbackOnPanic", testTxPanic},
		{"Nested", testTxNested},
		{"Ping", testPing},
	}
}

func testTxCommit(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	var u *mcpgate.User
	err := s.Tx(ctx, func(tx mcpgate.Store) error {
		u = mustUser(t, tx, "alice")
		got, err := tx.FindUserByName(ctx, "alice") // reads see the transaction's writes
		must(t, err)
		mustEqual(t, "user in tx", got, u)
		mustAgent(t, tx, "weather", u.ID)
		return tx.PutSkill(ctx, sampleSkill("weather", "forecast"))
	})
	must(t, err)
	_, err = s.FindUserByID(ctx, u.ID)
	must(t, err)
	_, err = s.FindSkill(ctx, "weather", "forecast")
	must(t, err)
}

func testTxRollback(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	owner := mustUser(t, s, "owner")
	gen := mustGeneration(t, s)
	err := s.Tx(ctx, func(tx mcpgate.Store) error {
		mustUser(t, tx, "alice")
		mustAgent(t, tx, "weather", owner.ID)
		return mcpgate.Errorf(mcpgate.EINVALID, "changed my mind")
	})
	mustCode(t, err, mcpgate.EINVALID)
	mustEqual(t, "message", mcpgate.ErrorMessage(err), "changed my mind")
	_, err = s.FindUserByName(ctx, "alice")
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindAgent(ctx, "weather")
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustEqual(t, "generation", mustGeneration(t, s), gen)

	// A failed write inside the transaction rolls back the earlier ones.
	err = s.Tx(ctx, func(tx mcpgate.Store) error {
		mustUser(t, tx, "bob")
		return tx.CreateUser(ctx, &mcpgate.User{Name: "owner"})
	})
	mustCode(t, err, mcpgate.ECONFLICT)
	_, err = s.FindUserByName(ctx, "bob")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testTxPanic(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Tx swallowed the panic")
			}
		}()
		_ = s.Tx(ctx, func(tx mcpgate.Store) error {
			mustUser(t, tx, "alice")
			panic("boom")
		})
	}()
	_, err := s.FindUserByName(ctx, "alice")
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustUser(t, s, "bob") // the writer is free again
}

func testTxNested(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	errInner := errors.New("inner")
	err := s.Tx(ctx, func(tx mcpgate.Store) error {
		mustUser(t, tx, "alice")
		return tx.Tx(ctx, func(inner mcpgate.Store) error {
			mustUser(t, inner, "bob")
			return errInner
		})
	})
	if !errors.Is(err, errInner) {
		t.Fatalf("Tx = %v, want the inner error", err)
	}
	users, err := s.ListUsers(ctx)
	must(t, err)
	mustEqual(t, "users", len(users), 0)
}

func testPing(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	must(t, s.Ping(ctx))
	must(t, s.Tx(ctx, func(tx mcpgate.Store) error { return tx.Ping(ctx) }))
}

func generationTests() []test {
	return []test{{"CountsAgentSkillAndToolChanges", testGeneration}}
}

func testGeneration(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	var u *mcpgate.User
	var a *mcpgate.Agent
	steps := []struct {
		name string
		do   func() error
		bump int64
	}{
		{"create user", func() error { u = mustUser(t, s, "alice"); return nil }, 0},
		{"create agent", func() error { a = mustAgent(t, s, "weather", u.ID); return nil }, 1},
		{"update agent", func() error { a.Name = "W"; return s.UpdateAgent(ctx, a) }, 1},
		{"put skill", func() error { return s.PutSkill(ctx, sampleSkill("weather", "f")) }, 1},
		{"put equal skill", func() error { return s.PutSkill(ctx, sampleSkill("weather", "f")) }, 0},
		{"change tools", func() error {
			sk := sampleSkill("weather", "f")
			sk.Tools = sk.Tools[1:]
			return s.PutSkill(ctx, sk)
		}, 1},
		{"create key", func() error {
			_ = mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyAgent, AgentID: "weather"})
			return nil
		}, 0},
		{"create session", func() error { mustSession(t, s, "sess", "weather"); return nil }, 0},
		{"update user", func() error { u.Admin = true; return s.UpdateUser(ctx, u) }, 0},
		{"delete skill", func() error { return s.DeleteSkill(ctx, "weather", "f") }, 1},
		{"failed delete", func() error { _ = s.DeleteSkill(ctx, "weather", "f"); return nil }, 0},
		{"delete agent", func() error { return s.DeleteAgent(ctx, "weather") }, 1},
		{"delete user", func() error { return s.DeleteUser(ctx, u.ID) }, 0},
	}
	for _, step := range steps {
		before := mustGeneration(t, s)
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := mustGeneration(t, s); got != before+step.bump {
			t.Errorf("%s: generation %d -> %d, want +%d", step.name, before, got, step.bump)
		}
	}
}
