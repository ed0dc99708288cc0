package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func keyTests() []test {
	return []test{
		{"CreateAndFind", testKeyCreateAndFind},
		{"CreateErrors", testKeyCreateErrors},
		{"ListNewestFirst", testKeyList},
		{"Revoke", testKeyRevoke},
		{"Touch", testKeyTouch},
		{"Expiry", testKeyExpiry},
		{"Update", testKeyUpdate},
	}
}

func testKeyCreateAndFind(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	mustAgent(t, s, "weather", u.ID)
	for _, k := range []*mcpgate.APIKey{
		{ID: "key_user", Kind: mcpgate.KeyUser, UserID: u.ID, Name: "laptop", Source: mcpgate.SourceCLI},
		{ID: "key_agent", Kind: mcpgate.KeyAgent, UserID: u.ID, AgentID: "weather", Hint: "bak_1234"},
		{Kind: mcpgate.KeyAgent, AgentID: "weather"},
	} {
		mustKey(t, s, k)
		mustStoredTime(t, "CreatedAt", k.CreatedAt)
		if k.ID == "" {
			t.Fatal("CreateKey left the ID empty")
		}
		byID, err := s.FindKey(ctx, k.ID)
		must(t, err)
		mustEqual(t, "FindKey", byID, k)
		byHash, err := s.FindKeyByHash(ctx, k.Hash)
		must(t, err)
		mustEqual(t, "FindKeyByHash", byHash, k)
	}
	_, err := s.FindKey(ctx, "key_missing")
	mustCode(t, err, mcpgate.ENOTFOUND)
	_, err = s.FindKeyByHash(ctx, "00")
	mustCode(t, err, mcpgate.ENOTFOUND)
}

func testKeyCreateErrors(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	k := mustKey(t, s, &mcpgate.APIKey{ID: "key_1", Kind: mcpgate.KeyUser, UserID: u.ID})
	mustCode(t, s.CreateKey(ctx, &mcpgate.APIKey{ID: "key_1", Kind: mcpgate.KeyUser, UserID: u.ID, Hash: "other"}), mcpgate.ECONFLICT)
	mustCode(t, s.CreateKey(ctx, &mcpgate.APIKey{ID: "key_2", Kind: mcpgate.KeyUser, UserID: u.ID, Hash: k.Hash}), mcpgate.ECONFLICT)
	mustCode(t, s.CreateKey(ctx, &mcpgate.APIKey{ID: "key_3", Kind: mcpgate.KeyUser, UserID: "usr_missing", Hash: "h3"}), mcpgate.EINVALID)
	mustCode(t, s.CreateKey(ctx, &mcpgate.APIKey{ID: "key_4", Kind: mcpgate.KeyAgent, AgentID: "missing", Hash: "h4"}), mcpgate.EINVALID)
	keys, err := s.ListKeys(ctx, mcpgate.KeyFilter{})
	must(t, err)
	mustEqual(t, "keys", keys, []*mcpgate.APIKey{k})
}

func testKeyList(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	alice, bob := mustUser(t, s, "alice"), mustUser(t, s, "bob")
	mustAgent(t, s, "weather", alice.ID)
	mustAgent(t, s, "news", bob.ID)
	var all []*mcpgate.APIKey
	for _, k := range []*mcpgate.APIKey{
		{Kind: mcpgate.KeyUser, UserID: alice.ID},
		{Kind: mcpgate.KeyAgent, UserID: alice.ID, AgentID: "weather"},
		{Kind: mcpgate.KeyUser, UserID: bob.ID},
		{Kind: mcpgate.KeyAgent, UserID: bob.ID, AgentID: "news"},
		{Kind: mcpgate.KeyAgent, UserID: alice.ID, AgentID: "weather"},
	} {
		all = append([]*mcpgate.APIKey{mustKey(t, s, k)}, all...) // newest first
		tick(k.CreatedAt)
	}
	for _, tc := range []struct {
		name string
		f    mcpgate.KeyFilter
		want []*mcpgate.APIKey
	}{
		{"all", mcpgate.KeyFilter{}, all},
		{"alice", mcpgate.KeyFilter{UserID: alice.ID}, []*mcpgate.APIKey{all[0], all[3], all[4]}},
		{"alice user keys", mcpgate.KeyFilter{UserID: alice.ID, Kind: mcpgate.KeyUser}, []*mcpgate.APIKey{all[4]}},
		{"weather", mcpgate.KeyFilter{AgentID: "weather"}, []*mcpgate.APIKey{all[0], all[3]}},
		{"agent keys", mcpgate.KeyFilter{Kind: mcpgate.KeyAgent}, []*mcpgate.APIKey{all[0], all[1], all[3]}},
		{"nobody", mcpgate.KeyFilter{UserID: "usr_missing"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ListKeys(ctx, tc.f)
			must(t, err)
			mustEqual(t, "ListKeys", got, tc.want)
		})
	}
}

func testKeyRevoke(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	k := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID})
	at := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("CET", 3600))
	must(t, s.RevokeKey(ctx, k.ID, at))
	must(t, s.RevokeKey(ctx, k.ID, at.Add(time.Hour)))
	got, err := s.FindKeyByHash(ctx, k.Hash)
	must(t, err)
	want := at.UTC().Truncate(time.Microsecond)
	if got.RevokedAt == nil || !got.RevokedAt.Equal(want) || got.RevokedAt.Location() != time.UTC {
		t.Fatalf("RevokedAt = %v, want %v", got.RevokedAt, want)
	}
	mustCode(t, s.RevokeKey(ctx, "key_missing", at), mcpgate.ENOTFOUND)
}

func testKeyTouch(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	k := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID})
	if k.LastUsedAt != nil {
		t.Fatalf("LastUsedAt = %v for a new key", k.LastUsedAt)
	}
	for _, at := range []time.Time{time.Now(), time.Now().Add(time.Second)} {
		must(t, s.TouchKey(ctx, k.ID, at))
		got, err := s.FindKey(ctx, k.ID)
		must(t, err)
		want := at.UTC().Truncate(time.Microsecond)
		if got.LastUsedAt == nil || !got.LastUsedAt.Equal(want) {
			t.Fatalf("LastUsedAt = %v, want %v", got.LastUsedAt, want)
		}
	}
	mustCode(t, s.TouchKey(ctx, "key_missing", time.Now()), mcpgate.ENOTFOUND)
}

func testKeyExpiry(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	at := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("CET", 3600))
	k := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID, ExpiresAt: &at})
	want := at.UTC().Truncate(time.Microsecond)
	if k.ExpiresAt == nil || !k.ExpiresAt.Equal(want) || k.ExpiresAt.Location() != time.UTC {
		t.Fatalf("CreateKey left ExpiresAt = %v, want %v", k.ExpiresAt, want)
	}
	for _, find := range []func() (*mcpgate.APIKey, error){
		func() (*mcpgate.APIKey, error) { return s.FindKey(ctx, k.ID) },
		func() (*mcpgate.APIKey, error) { return s.FindKeyByHash(ctx, k.Hash) },
	} {
		got, err := find()
		must(t, err)
		mustEqual(t, "key with an expiry", got, k)
	}
	never := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID})
	got, err := s.FindKey(ctx, never.ID)
	must(t, err)
	if got.ExpiresAt != nil {
		t.Errorf("a key made without expiry expires at %v", got.ExpiresAt)
	}
}

func testKeyUpdate(t *testing.T, s mcpgate.Store) {
	ctx := context.Background()
	u := mustUser(t, s, "alice")
	k := mustKey(t, s, &mcpgate.APIKey{Kind: mcpgate.KeyUser, UserID: u.ID, Name: "laptop"})
	at := time.Now().Add(time.Hour)
	k.Name, k.ExpiresAt = "desktop", &at
	must(t, s.UpdateKey(ctx, k))
	mustStoredPrecision(t, "ExpiresAt", *k.ExpiresAt)
	got, err := s.FindKey(ctx, k.ID)
	must(t, err)
	mustEqual(t, "updated key", got, k)
	k.Name, k.ExpiresAt = "", nil
	must(t, s.UpdateKey(ctx, k))
	got, err = s.FindKeyByHash(ctx, k.Hash)
	must(t, err)
	mustEqual(t, "key whose expiry was removed", got, k)
	mustCode(t, s.UpdateKey(ctx, &mcpgate.APIKey{ID: "key_missing"}), mcpgate.ENOTFOUND)
}
