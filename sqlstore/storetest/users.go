package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

func userTests() []test {
	return []test{
		{"CreateAndFind", testUserCreateAndFind},
		{"CreateConflict", testUserCreateConflict},
		{"Update", testUserUpdate},
		{"UpdateErrors", testUserUpdateErrors},
		{"NotFound", testUserNotFound},
		{"ListByName", testUserList},
		{"Delete", testUserDelete},
		{"DeleteOwnerOfAgents", testUserDeleteOwner},
	}
}

func testUserCreateAndFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := &mcpgate.User{Name: "alice", PasswordHash: "$argon2id$x", Admin: true, Source: mcpgate.SourceConfig}
	must(t, s.CreateUser(ctx, u))
	if !strings.HasPrefix(u.ID, "usr_") {
		t.Errorf("ID = %q, want a usr_ prefix", u.ID)
	}
	mustStoredTime(t, "CreatedAt", u.CreatedAt)
	mustEqual(t, "UpdatedAt", u.UpdatedAt, u.CreatedAt)

	byID, err := s.FindUserByID(ctx, u.ID)
	must(t, err)
	mustEqual(t, "FindUserByID", byID, u)
	byName, err := s.FindUserByName(ctx, "alice")
	must(t, err)
	mustEqual(t, "FindUserByName", byName, u)

	withID := &mcpgate.User{ID: "usr_given", Name: "bob"}
	must(t, s.CreateUser(ctx, withID))
	if withID.ID != "usr_given" {
		t.Errorf("ID = %q, want the given one kept", withID.ID)
	}
}

func testUserCreateConflict(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustCode(t, s.CreateUser(ctx, &mcpgate.User{Name: "alice"}), mcpgate.ECONFLICT)
	mustCode(t, s.CreateUser(ctx, &mcpgate.User{ID: u.ID, Name: "other"}), mcpgate.ECONFLICT)
}

func testUserUpdate(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	created := u.CreatedAt
	tick(u.UpdatedAt)
	u.Name, u.PasswordHash, u.Admin, u.Source = "alicia", "", true, mcpgate.SourceAPI
	must(t, s.UpdateUser(ctx, u))
	if !u.UpdatedAt.After(created) {
		t.Errorf("UpdatedAt = %v, want after %v", u.UpdatedAt, created)
	}
	mustEqual(t, "CreatedAt", u.CreatedAt, created)
	got, err := s.FindUserByID(ctx, u.ID)
	must(t, err)
	mustEqual(t, "updated user", got, u)
	_, err = s.FindUserByName(ctx, "alice")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testUserUpdateErrors(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	mustUser(t, s, "alice")
	bob := mustUser(t, s, "bob")
	bob.Name = "alice"
	mustCode(t, s.UpdateUser(ctx, bob), mcpgate.ECONFLICT)
	mustCode(t, s.UpdateUser(ctx, &mcpgate.User{ID: "usr_missing", Name: "carol"}), mcpgate.ENOTFOUND)
}

func testUserNotFound(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	_, err := s.FindUserByID(ctx, "usr_missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindUserByName(ctx, "missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
	mustCode(t, s.DeleteUser(ctx, "usr_missing"), mcpgate.ENOTFOUND)
}

func testUserList(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	empty, err := s.ListUsers(ctx)
	must(t, err)
	mustEqual(t, "empty list", len(empty), 0)
	var want []*mcpgate.User
	for _, name := range []string{"carol", "alice", "dave", "bob"} {
		want = append(want, mustUser(t, s, name))
	}
	want = []*mcpgate.User{want[1], want[3], want[0], want[2]}
	got, err := s.ListUsers(ctx)
	must(t, err)
	mustEqual(t, "ListUsers", got, want)
}

func testUserDelete(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	other := mustUser(t, s, "bob")
	k := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID})
	kept := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: other.ID})
	must(t, s.DeleteUser(ctx, u.ID))
	_, err := s.FindUserByID(ctx, u.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindKey(ctx, k.ID)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindKeyByHash(ctx, k.Hash)
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindKey(ctx, kept.ID)
	must(t, err)
	mustCode(t, s.DeleteUser(ctx, u.ID), mcpgate.ENOTFOUND)
}

func testUserDeleteOwner(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	gen := mustGeneration(t, s)
	mustCode(t, s.DeleteUser(ctx, u.ID), mcpgate.ECONFLICT)
	_, err := s.FindUserByID(ctx, u.ID)
	must(t, err)
	mustEqual(t, "generation", mustGeneration(t, s), gen)

	must(t, s.DeleteAgent(ctx, "weather"))
	must(t, s.DeleteUser(ctx, u.ID))
}
