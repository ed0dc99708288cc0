package demo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/sqlite"
	"github.com/mcpgate/mcpgate/sqlstore/storetest"
)

// mustOpen opens a fresh SQLite store under t.TempDir().
func mustOpen(tb testing.TB) mcpgate.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "mcpgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestSetupTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	first, err := Setup(ctx, store, "http://127.0.0.1:8094/_demo/api")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.Key, mcpgate.UserKeyPrefix) || first.AgentID != "demo" || first.UserName != "demo" {
		t.Fatalf("first run: %+v", first)
	}
	k, err := store.FindKeyByHash(ctx, auth.HashSecret(first.Key))
	if err != nil || k.UserID != first.UserID || k.Source != mcpgate.SourceDemo || k.Kind != mcpgate.KeyUser {
		t.Fatalf("stored key %+v, %v", k, err)
	}
	a, err := store.FindAgent(ctx, "demo")
	if err != nil || !a.MCPEnabled || a.OwnerID != first.UserID || a.Source != mcpgate.SourceDemo || a.Name != "mcpgate demo" {
		t.Fatalf("agent %+v, %v", a, err)
	}
	before := storetest.MustSnapshot(t, store)

	second, err := Setup(ctx, store, "http://127.0.0.1:8094/_demo/api")
	if err != nil {
		t.Fatal(err)
	}
	want := *first
	want.Key = ""
	want.Password = "" // like the key, the password is shown on the run that made it only
	if diff := cmp.Diff(&want, second); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, storetest.MustSnapshot(t, store)); diff != "" {
		t.Errorf("second run changed the store (-before +after):\n%s", diff)
	}
}

func TestSetupNewAddress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	if _, err := Setup(ctx, store, "http://127.0.0.1:8094/_demo/api"); err != nil {
		t.Fatal(err)
	}
	gen := storetest.MustSnapshot(t, store).Generation
	d, err := Setup(ctx, store, "http://127.0.0.1:9000/_demo/api")
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.FindSkill(ctx, "demo", "demo")
	if err != nil || s.BaseURL != "http://127.0.0.1:9000/_demo/api" {
		t.Fatalf("skill %+v, %v", s, err)
	}
	if d.Key != "" {
		t.Error("a new address made a new key")
	}
	if after := storetest.MustSnapshot(t, store).Generation; after == gen {
		t.Error("generation unchanged after the skill changed")
	}
}

func TestSetupAfterRevoke(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	first, err := Setup(ctx, store, "http://127.0.0.1:8094/_demo/api")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RevokeKey(ctx, first.KeyID, time.Now()); err != nil {
		t.Fatal(err)
	}
	second, err := Setup(ctx, store, "http://127.0.0.1:8094/_demo/api")
	if err != nil {
		t.Fatal(err)
	}
	if second.Key == "" || second.KeyID == first.KeyID {
		t.Errorf("after revoking the demo key, setup gave %+v", second)
	}
}

func TestSetupRefusesAnAgentItDidNotMake(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	u := &mcpgate.User{Name: "carol", Source: mcpgate.SourceCLI}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(ctx, &mcpgate.Agent{ID: AgentID, OwnerID: u.ID, Source: mcpgate.SourceConfig}); err != nil {
		t.Fatal(err)
	}
	_, err := Setup(ctx, s, "http://127.0.0.1:8094"+Prefix)
	if mcpgate.ErrorCode(err) != mcpgate.ECONFLICT {
		t.Fatalf("Setup = %v, want ECONFLICT", err)
	}
	if skills, _ := s.ListSkills(ctx, AgentID); len(skills) != 0 {
		t.Errorf("the demo put %d skills on an agent it did not make", len(skills))
	}
}

// TestSetupDemoUserIsAdmin checks that the demo user is an administrator
// with a password shown once, that a demo user of an older version (no
// admin, no password) is brought up to that, and that a password the user
// already has is kept.
func TestSetupDemoUserIsAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	d, err := Setup(ctx, store, "http://127.0.0.1:8094"+Prefix)
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.FindUserByName(ctx, UserName)
	if err != nil || !u.Admin || len(d.Password) < auth.MinPasswordLen || !auth.CheckPassword(u.PasswordHash, d.Password) {
		t.Fatalf("demo user %+v (%v) with password %q: want an admin whose password was returned", u, err, d.Password)
	}
	u.Admin, u.PasswordHash = false, "" // as an older version left it
	if err := store.UpdateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	d, err = Setup(ctx, store, "http://127.0.0.1:8094"+Prefix)
	if u, _ = store.FindUserByName(ctx, UserName); err != nil || !u.Admin || d.Password == "" || !auth.CheckPassword(u.PasswordHash, d.Password) {
		t.Fatalf("older demo user after Setup: %+v, password %q, %v", u, d.Password, err)
	}
	hash := u.PasswordHash
	if d, err = Setup(ctx, store, "http://127.0.0.1:8094"+Prefix); err != nil || d.Password != "" {
		t.Fatalf("third run: password %q, %v; want none made", d.Password, err)
	}
	if u, _ = store.FindUserByName(ctx, UserName); u.PasswordHash != hash {
		t.Error("a restart changed the demo user's password")
	}
}
