package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestKeys(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)

	has, err := db.HasKeys(ctx)
	if err != nil || has {
		t.Fatalf("HasKeys on a new store = %v, %v; want false", has, err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, secretA, hashA, err := memento.NewAPIKey("acme", "", memento.KeyAdmin, now)
	if err != nil {
		t.Fatal(err)
	}
	b, _, hashB, err := memento.NewAPIKey("globex", "bob", memento.KeyRead, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		k    memento.APIKey
		hash string
	}{{a, hashA}, {b, hashB}} {
		if err := db.CreateKey(ctx, k.k, k.hash); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, db.CreateKey(ctx, a, "other"), memento.ECONFLICT)
	if has, err := db.HasKeys(ctx); err != nil || !has {
		t.Fatalf("HasKeys = %v, %v; want true", has, err)
	}

	got, err := db.KeyByHash(ctx, memento.HashAPIKey(secretA))
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != a.ID || got.Tenant != "acme" || got.Role != memento.KeyAdmin || got.RevokedAt != nil || !got.CreatedAt.Equal(now) {
		t.Errorf("KeyByHash = %+v, want %+v", got, a)
	}
	_, err = db.KeyByHash(ctx, memento.HashAPIKey(secretA+"x"))
	wantCode(t, err, memento.ENOTFOUND)

	all, err := db.Keys(ctx, "")
	if err != nil || len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID || all[1].User != "bob" {
		t.Fatalf("Keys(all) = %+v, %v", all, err)
	}
	globex, err := db.Keys(ctx, "globex")
	if err != nil || len(globex) != 1 || globex[0].ID != b.ID {
		t.Fatalf("Keys(globex) = %+v, %v", globex, err)
	}

	// A tenant cannot revoke another's key; it looks absent.
	wantCode(t, db.RevokeKey(ctx, "globex", a.ID), memento.ENOTFOUND)
	wantCode(t, db.RevokeKey(ctx, "", "key_missing"), memento.ENOTFOUND)
	if err := db.RevokeKey(ctx, "acme", a.ID); err != nil {
		t.Fatal(err)
	}
	got, err = db.KeyByHash(ctx, hashA)
	if err != nil || got.RevokedAt == nil {
		t.Fatalf("after revoke KeyByHash = %+v, %v; want RevokedAt set", got, err)
	}
	first := *got.RevokedAt
	if err := db.RevokeKey(ctx, "", a.ID); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	got, _ = db.KeyByHash(ctx, hashA)
	if !got.RevokedAt.Equal(first) {
		t.Errorf("a second revoke moved RevokedAt from %v to %v", first, got.RevokedAt)
	}
	// Revoked keys keep the server in keyed mode.
	if has, err := db.HasKeys(ctx); err != nil || !has {
		t.Fatalf("HasKeys after revoke = %v, %v; want true", has, err)
	}
}

func TestNewAPIKey(t *testing.T) {
	k, key, hash, err := memento.NewAPIKey("t", "u", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if k.Role != memento.KeyWrite {
		t.Errorf("default role = %q, want write", k.Role)
	}
	if !memento.LooksLikeAPIKey(key) || len(key) != len("mk_")+43 {
		t.Errorf("key %q does not look like a key", key)
	}
	if hash != memento.HashAPIKey(key) || hash == key {
		t.Errorf("hash %q is not the key's SHA-256", hash)
	}
	_, key2, _, _ := memento.NewAPIKey("t", "u", "", time.Now())
	if key2 == key {
		t.Error("two keys are equal")
	}
	for _, bad := range []struct{ tenant, user, role string }{{"", "", "read"}, {"t", "", "owner"}, {"t", " u", "read"}} {
		if _, _, _, err := memento.NewAPIKey(bad.tenant, bad.user, memento.KeyRole(bad.role), time.Now()); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("NewAPIKey(%q, %q, %q) err = %v, want EINVALID", bad.tenant, bad.user, bad.role, err)
		}
	}
}
