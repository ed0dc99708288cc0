package config

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// mustApply parses and applies a config that must apply.
func mustApply(tb testing.TB, s mcpgate.Store, text string, lookup mcpgate.LookupFunc) *Changes {
	tb.Helper()
	ch, err := mustParse(tb, text, lookup).Apply(context.Background(), s)
	if err != nil {
		tb.Fatalf("Apply: %v", err)
	}
	return ch
}

// mustCreateUser stores a user made another way than the config file.
func mustCreateUser(tb testing.TB, s mcpgate.Store, name, source, password string) *mcpgate.User {
	tb.Helper()
	u := &mcpgate.User{Name: name, Source: source}
	if password != "" {
		var err error
		if u.PasswordHash, err = auth.HashPassword(password); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.CreateUser(context.Background(), u); err != nil {
		tb.Fatal(err)
	}
	return u
}

// mustCreateAgent stores an agent made another way than the config file.
func mustCreateAgent(tb testing.TB, s mcpgate.Store, id, ownerID, source string) {
	tb.Helper()
	if err := s.CreateAgent(context.Background(), &mcpgate.Agent{ID: id, OwnerID: ownerID, Source: source}); err != nil {
		tb.Fatal(err)
	}
}

func TestApplyExampleTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	example := mustRead(t, "example.yaml")
	ch := mustApply(t, store, example, exampleEnv)
	want := &Changes{Users: Count{Created: 2}, Agents: Count{Created: 3}, Skills: Count{Created: 6}}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("first apply (-want +got):\n%s", diff)
	}
	if got := ch.String(); got != "users: 2 created; agents: 3 created; skills: 6 created" {
		t.Errorf("String() = %q", got)
	}

	alice, err := store.FindUserByName(ctx, "alice")
	if err != nil || !alice.Admin || alice.Source != mcpgate.SourceConfig || !auth.CheckPassword(alice.PasswordHash, "correct horse") {
		t.Fatalf("alice %+v, %v", alice, err)
	}
	inv, err := store.FindAgent(ctx, "invoices")
	if err != nil || inv.OwnerID != alice.ID || !inv.MCPEnabled || inv.Source != mcpgate.SourceConfig || inv.Name != "Invoice assistant" {
		t.Fatalf("agent %+v, %v", inv, err)
	}
	stored, err := store.FindSkill(ctx, "invoices", "billing")
	if err != nil {
		t.Fatal(err)
	}
	parsed := mustParse(t, example, exampleEnv).Agents[0].Skills[0]
	if diff := cmp.Diff(parsed, stored, cmpopts.IgnoreFields(mcpgate.Skill{}, "CreatedAt", "UpdatedAt")); diff != "" {
		t.Errorf("stored skill (-parsed +stored):\n%s", diff)
	}

	before := storetest.MustSnapshot(t, store)
	if ch := mustApply(t, store, example, exampleEnv); !ch.Empty() || ch.String() != "no changes" {
		t.Errorf("second apply changed %s", ch)
	}
	if diff := cmp.Diff(before, storetest.MustSnapshot(t, store)); diff != "" {
		t.Errorf("second apply changed the store (-before +after):\n%s", diff)
	}
}

func TestApplyStoresSecretReferencesOnly(t *testing.T) {
	t.Parallel()
	store := mustOpen(t)
	mustApply(t, store, mustRead(t, "example.yaml"), exampleEnv)
	snap := storetest.MustSnapshot(t, store)
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range snap.Users {
		b = append(b, u.PasswordHash...) // not in the JSON form
	}
	if strings.Contains(string(b), "tok_123") || strings.Contains(string(b), "correct horse") {
		t.Error("a secret's value was stored")
	}
	if !strings.Contains(string(b), `Bearer ${env:BILLING_TOKEN}`) {
		t.Error("the secret reference was not stored as written")
	}
}

func TestApplyRemovesWhatTheFileDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	example := mustRead(t, "example.yaml")
	mustApply(t, store, example, exampleEnv)

	// Entries made another way, some on the file's own agent.
	carol := mustCreateUser(t, store, "carol", mcpgate.SourceCLI, "")
	mustCreateAgent(t, store, "manual", carol.ID, mcpgate.SourceCLI)
	extra := &mcpgate.Skill{AgentID: "invoices", Name: "extra", Kind: mcpgate.SkillREST, Source: mcpgate.SourceAPI, AutoApprove: true}
	if err := store.PutSkill(ctx, extra); err != nil {
		t.Fatal(err)
	}

	// Drop the weather agent (and its skill) and its owner bob.
	i := strings.Index(example, "  - id: weather")
	dropped := strings.Replace(example[:i], "  - name: bob                          # no password: cannot sign in with one\n", "", 1)
	ch := mustApply(t, store, dropped, exampleEnv)
	want := &Changes{Users: Count{Deleted: 1}, Agents: Count{Deleted: 1}, Skills: Count{Deleted: 1}}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	for _, err := range []error{
		func() error { _, err := store.FindUserByName(ctx, "carol"); return err }(),
		func() error { _, err := store.FindAgent(ctx, "manual"); return err }(),
		func() error { _, err := store.FindSkill(ctx, "invoices", "extra"); return err }(),
		func() error { _, err := store.FindSkill(ctx, "invoices", "billing"); return err }(),
	} {
		if err != nil {
			t.Errorf("an entry the apply must keep is gone: %v", err)
		}
	}
	if _, err := store.FindUserByName(ctx, "bob"); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("bob: %v, want ENOTFOUND", err)
	}
	if _, err := store.FindAgent(ctx, "weather"); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("weather: %v, want ENOTFOUND", err)
	}

	// Removing a skill from a kept agent removes only that skill.
	noBilling := mustParse(t, dropped, exampleEnv)
	noBilling.Agents[0].Skills = nil
	if ch, err := noBilling.Apply(ctx, store); err != nil || ch.String() != "skills: 1 deleted" {
		t.Errorf("apply without billing: %v, %v", ch, err)
	}
}

func TestApplyUpdatesEntriesMadeAnotherWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	mustCreateUser(t, store, "alice", mcpgate.SourceCLI, "old password")
	bob := mustCreateUser(t, store, "bob", mcpgate.SourceDemo, "bobs password")
	mustCreateAgent(t, store, "invoices", bob.ID, mcpgate.SourceAPI)

	example := mustRead(t, "example.yaml")
	ch := mustApply(t, store, example, exampleEnv)
	want := &Changes{Users: Count{Updated: 1}, Agents: Count{Created: 2, Updated: 1}, Skills: Count{Created: 6}}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	alice, _ := store.FindUserByName(ctx, "alice")
	if alice.Source != mcpgate.SourceCLI || !alice.Admin || !auth.CheckPassword(alice.PasswordHash, "correct horse") {
		t.Errorf("alice was not updated to the file's fields, keeping her source: %+v", alice)
	}
	bobAfter, _ := store.FindUserByName(ctx, "bob")
	if bobAfter.Source != mcpgate.SourceDemo || !auth.CheckPassword(bobAfter.PasswordHash, "bobs password") {
		t.Errorf("a user the file does not own lost its source or password: %+v", bobAfter)
	}
	inv, _ := store.FindAgent(ctx, "invoices")
	if inv.Source != mcpgate.SourceAPI || inv.OwnerID != alice.ID || inv.Name != "Invoice assistant" {
		t.Errorf("agent not updated to the file's fields, keeping its source: %+v", inv)
	}
	if ch := mustApply(t, store, example, exampleEnv); !ch.Empty() {
		t.Errorf("second apply changed %s", ch)
	}
}

func TestApplyNeverDeletesEntriesMadeAnotherWay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	carol := mustCreateUser(t, store, "carol", mcpgate.SourceCLI, "carols password")
	mustCreateAgent(t, store, "manual", carol.ID, mcpgate.SourceCLI)
	extra := &mcpgate.Skill{AgentID: "manual", Name: "extra", Kind: mcpgate.SkillREST, Source: mcpgate.SourceAPI, AutoApprove: true}
	if err := store.PutSkill(ctx, extra); err != nil {
		t.Fatal(err)
	}
	const file = `users:
  - name: carol
    admin: true
agents:
  - id: manual
    name: Manual
    owner: carol
    skills:
      - name: extra
        kind: rest
        base_url: https://api.example.com
        tools:
          - name: ping
            input_schema: {type: object}
            request: {path: /ping}
      - name: more
        kind: rest
        base_url: https://api.example.com
        tools:
          - name: pong
            input_schema: {type: object}
            request: {path: /pong}
`
	ch := mustApply(t, store, file, nil)
	want := &Changes{Users: Count{Updated: 1}, Agents: Count{Updated: 1}, Skills: Count{Created: 1, Updated: 1}}
	if diff := cmp.Diff(want, ch); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if ch := mustApply(t, store, file, nil); !ch.Empty() {
		t.Errorf("second apply changed %s", ch)
	}

	// Dropped from the file, they stay as the file left them; only the
	// skill the file created goes.
	ch = mustApply(t, store, "users: []\nagents: []\n", nil)
	if diff := cmp.Diff(&Changes{Skills: Count{Deleted: 1}}, ch); diff != "" {
		t.Errorf("changes after dropping (-want +got):\n%s", diff)
	}
	u, err := store.FindUserByName(ctx, "carol")
	if err != nil || u.Source != mcpgate.SourceCLI || !u.Admin || !auth.CheckPassword(u.PasswordHash, "carols password") {
		t.Errorf("carol: %+v, %v", u, err)
	}
	a, err := store.FindAgent(ctx, "manual")
	if err != nil || a.Source != mcpgate.SourceCLI || a.Name != "Manual" {
		t.Errorf("agent manual: %+v, %v", a, err)
	}
	s, err := store.FindSkill(ctx, "manual", "extra")
	if err != nil || s.Source != mcpgate.SourceAPI || len(s.Tools) != 1 || s.Tools[0].Name != "ping" {
		t.Errorf("skill extra: %+v, %v", s, err)
	}
	if _, err := store.FindSkill(ctx, "manual", "more"); mcpgate.ErrorCode(err) != mcpgate.ENOTFOUND {
		t.Errorf("skill more, which the file created: %v, want ENOTFOUND", err)
	}
}

func TestApplyPasswordChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	example := mustRead(t, "example.yaml")
	mustApply(t, store, example, exampleEnv)
	newEnv := env(map[string]string{"ALICE_PASSWORD": "battery staple", "BILLING_TOKEN": "tok_123",
		"SEARCH_TOKEN": "s", "FILES_TOKEN": "f", "NOTIFIER_PUSH_SECRET": "p"})
	if ch := mustApply(t, store, example, newEnv); ch.String() != "users: 1 updated" {
		t.Errorf("changes %s, want users: 1 updated", ch)
	}
	alice, _ := store.FindUserByName(ctx, "alice")
	if !auth.CheckPassword(alice.PasswordHash, "battery staple") {
		t.Error("the new password does not match the stored hash")
	}
}

func TestApplyPasswordRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	mustCreateUser(t, store, "bob", mcpgate.SourceCLI, "bobs password")
	example := mustRead(t, "example.yaml")
	mustApply(t, store, example, exampleEnv)

	noPassword := strings.Replace(example, "    password: ${env:ALICE_PASSWORD}", "", 1)
	if ch := mustApply(t, store, noPassword, exampleEnv); ch.String() != "users: 1 updated" {
		t.Errorf("changes %s, want users: 1 updated", ch)
	}
	alice, _ := store.FindUserByName(ctx, "alice")
	if alice.PasswordHash != "" {
		t.Errorf("alice, whom the file owns, kept the hash of a password the file removed: %q", alice.PasswordHash)
	}
	bob, _ := store.FindUserByName(ctx, "bob")
	if !auth.CheckPassword(bob.PasswordHash, "bobs password") {
		t.Error("bob, whom the file does not own, lost his password")
	}
	if ch := mustApply(t, store, noPassword, exampleEnv); !ch.Empty() {
		t.Errorf("second apply changed %s", ch)
	}
}

// txSpy is a store that notes whether users were read before the first
// transaction began.
type txSpy struct {
	mcpgate.Store
	txs, readsBeforeTx int
}

// ListUsers counts a read of the users before the first transaction.
func (s *txSpy) ListUsers(ctx context.Context) ([]*mcpgate.User, error) {
	if s.txs == 0 {
		s.readsBeforeTx++
	}
	return s.Store.ListUsers(ctx)
}

// FindUserByName counts a read of a user before the first transaction.
func (s *txSpy) FindUserByName(ctx context.Context, name string) (*mcpgate.User, error) {
	if s.txs == 0 {
		s.readsBeforeTx++
	}
	return s.Store.FindUserByName(ctx, name)
}

// Tx counts transactions.
func (s *txSpy) Tx(ctx context.Context, fn func(tx mcpgate.Store) error) error {
	s.txs++
	return s.Store.Tx(ctx, fn)
}

// TestApplyHashesBeforeTheTransaction checks that Apply reads the users,
// to check and hash their passwords, before it takes the store's writer.
func TestApplyHashesBeforeTheTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	example := mustRead(t, "example.yaml")
	for _, step := range []string{"create", "keep"} {
		spy := &txSpy{Store: store}
		if _, err := mustParse(t, example, exampleEnv).Apply(ctx, spy); err != nil {
			t.Fatal(err)
		}
		if spy.txs != 1 || spy.readsBeforeTx == 0 {
			t.Errorf("%s: %d transactions, %d reads of users before the first", step, spy.txs, spy.readsBeforeTx)
		}
	}
	alice, _ := store.FindUserByName(ctx, "alice")
	if !auth.CheckPassword(alice.PasswordHash, "correct horse") {
		t.Error("alice's stored hash does not match the file's password")
	}
}

func TestApplyOwners(t *testing.T) {
	t.Parallel()
	const file = `users:
  - name: erin
agents:
  - id: a1
    owner: carol
  - id: a2
    owner: dave
`
	ctx := context.Background()
	store := mustOpen(t)
	mustApply(t, store, "users: [{name: zed}]\n", nil)
	mustCreateUser(t, store, "carol", mcpgate.SourceCLI, "")
	before := storetest.MustSnapshot(t, store)

	_, err := mustParse(t, file, nil).Apply(ctx, store)
	want := `mcpgate.yaml:7: agents[1].owner: user "dave" is neither declared under users nor in the gateway; declare it or create it with: mcpgate user create dave`
	var ce *Error
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if diff := cmp.Diff(before, storetest.MustSnapshot(t, store)); diff != "" {
		t.Errorf("a failed apply changed the store (-before +after):\n%s", diff)
	}

	// An owner the file created and now drops is not silently deleted.
	_, err = mustParse(t, "agents: [{id: a1, owner: zed}]\n", nil).Apply(ctx, store)
	if err == nil || !strings.Contains(err.Error(), `agents[0].owner: user "zed" is no longer declared under users`) {
		t.Errorf("owner dropped from the file: %v", err)
	}
}

func TestApplyUserStillOwnsAgents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := mustOpen(t)
	mustApply(t, store, "users: [{name: bob}, {name: alice}]\n", nil)
	bob, _ := store.FindUserByName(ctx, "bob")
	mustCreateAgent(t, store, "manual", bob.ID, mcpgate.SourceCLI)
	before := storetest.MustSnapshot(t, store)

	_, err := mustParse(t, "users: []\n", nil).Apply(ctx, store)
	want := `mcpgate.yaml: users: user "bob" is no longer in the file but still owns agent manual (source cli); keep the user in the file, or delete or move those agents first`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if diff := cmp.Diff(before, storetest.MustSnapshot(t, store)); diff != "" {
		t.Errorf("a failed apply changed the store (-before +after):\n%s", diff)
	}
}

func TestBadFileLeavesStore(t *testing.T) {
	t.Parallel()
	store := mustOpen(t)
	example := mustRead(t, "example.yaml")
	mustApply(t, store, example, exampleEnv)
	before := storetest.MustSnapshot(t, store)
	bad := strings.Replace(example, "timeout: 30s", "timeout: soon", 1)
	if _, err := Parse("mcpgate.yaml", []byte(bad), exampleEnv); err == nil {
		t.Fatal("a bad file parsed")
	}
	// An unset variable makes the whole file bad, too.
	if _, err := Parse("mcpgate.yaml", []byte(example), env(nil)); err == nil ||
		!strings.Contains(err.Error(), "environment variable ALICE_PASSWORD is not set") ||
		!strings.Contains(err.Error(), "environment variable BILLING_TOKEN is not set") {
		t.Fatalf("unset variables: %v", err)
	}
	if diff := cmp.Diff(before, storetest.MustSnapshot(t, store)); diff != "" {
		t.Errorf("the store changed (-before +after):\n%s", diff)
	}
}

func TestChangesString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ch   Changes
		want string
	}{
		{Changes{}, "no changes"},
		{Changes{Agents: Count{Updated: 1}}, "agents: 1 updated"},
		{Changes{Users: Count{Created: 1, Deleted: 2}, Skills: Count{Created: 3, Updated: 1, Deleted: 1}},
			"users: 1 created, 2 deleted; skills: 3 created, 1 updated, 1 deleted"},
	} {
		if got := c.ch.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.ch, got, c.want)
		}
	}
}
