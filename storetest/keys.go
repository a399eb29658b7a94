package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// testKeys stores API keys by hash: lookup, lists per tenant, revocation
// (idempotent, confined to the key's tenant) and HasKeys, which stays true
// once a key existed.
func testKeys(t *testing.T, open Opener) {
	st := open(t)
	ks, ok := st.(memento.KeyStore)
	if !ok {
		t.Skip("the store does not implement memento.KeyStore")
	}
	ctx := t.Context()
	if has, err := ks.HasKeys(ctx); err != nil || has {
		t.Fatalf("HasKeys on a new store = %v, %v; want false", has, err)
	}
	now := t0 // with nanoseconds, which the store keeps
	a, secretA, hashA, err := memento.NewAPIKey("acme", "", memento.KeyAdmin, now)
	if err != nil {
		t.Fatal(err)
	}
	b, secretB, hashB, err := memento.NewAPIKey("globex", "bob", memento.KeyRead, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c, _, hashC, err := memento.NewAPIKey("acme", "ann", memento.KeyWrite, now.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		k    memento.APIKey
		hash string
	}{{a, hashA}, {b, hashB}, {c, hashC}} {
		if err := ks.CreateKey(ctx, k.k, k.hash); err != nil {
			t.Fatalf("CreateKey(%s): %v", k.k.ID, err)
		}
	}
	wantCode(t, "CreateKey of a stored id", ks.CreateKey(ctx, a, "another-hash"), memento.ECONFLICT)
	other := a
	other.ID = "key_other"
	wantCode(t, "CreateKey of a stored hash", ks.CreateKey(ctx, other, hashA), memento.ECONFLICT)
	bad := a
	bad.ID, bad.Role = "key_bad", "owner"
	wantCode(t, "CreateKey with an unknown role", ks.CreateKey(ctx, bad, "bad-hash"), memento.EINVALID)
	wantCode(t, "CreateKey without a hash", ks.CreateKey(ctx, memento.APIKey{ID: "key_x", Tenant: "acme", Role: memento.KeyRead}, ""), memento.EINVALID)
	if has, err := ks.HasKeys(ctx); err != nil || !has {
		t.Fatalf("HasKeys = %v, %v; want true", has, err)
	}

	got, err := ks.KeyByHash(ctx, memento.HashAPIKey(secretA))
	if err != nil {
		t.Fatalf("KeyByHash: %v", err)
	}
	if got.ID != a.ID || got.Tenant != "acme" || got.User != "" || got.Role != memento.KeyAdmin || got.RevokedAt != nil || !got.CreatedAt.Equal(now) {
		t.Errorf("KeyByHash = %+v, want %+v", got, a)
	}
	if got, err := ks.KeyByHash(ctx, memento.HashAPIKey(secretB)); err != nil || got.User != "bob" || got.Role != memento.KeyRead {
		t.Errorf("KeyByHash of the user key = %+v, %v; want bob's read key", got, err)
	}
	_, err = ks.KeyByHash(ctx, memento.HashAPIKey(secretA+"x"))
	wantCode(t, "KeyByHash of an unknown key", err, memento.ENOTFOUND)

	keyIDs := func(keys []memento.APIKey) []string {
		out := []string{}
		for _, k := range keys {
			out = append(out, k.ID)
		}
		return out
	}
	for _, tc := range []struct {
		tenant string
		want   []string
	}{{"", []string{a.ID, b.ID, c.ID}}, {"acme", []string{a.ID, c.ID}}, {"globex", []string{b.ID}}, {"initech", []string{}}} {
		keys, err := ks.Keys(ctx, tc.tenant)
		if err != nil {
			t.Fatalf("Keys(%q): %v", tc.tenant, err)
		}
		if got := keyIDs(keys); !slices.Equal(got, tc.want) {
			t.Errorf("Keys(%q) = %v, want %v, oldest first", tc.tenant, got, tc.want)
		}
	}

	// A tenant cannot revoke another's key; it looks absent.
	wantCode(t, "RevokeKey of another tenant's key", ks.RevokeKey(ctx, "globex", a.ID), memento.ENOTFOUND)
	wantCode(t, "RevokeKey of an unknown key", ks.RevokeKey(ctx, "", "key_missing"), memento.ENOTFOUND)
	if got, _ := ks.KeyByHash(ctx, hashA); got == nil || got.RevokedAt != nil {
		t.Fatalf("another tenant's revocation touched the key: %+v", got)
	}
	if err := ks.RevokeKey(ctx, "acme", a.ID); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	got, err = ks.KeyByHash(ctx, hashA)
	if err != nil || got.RevokedAt == nil {
		t.Fatalf("after revoke KeyByHash = %+v, %v; want RevokedAt set", got, err)
	}
	first := *got.RevokedAt
	if err := ks.RevokeKey(ctx, "", a.ID); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	if got, _ := ks.KeyByHash(ctx, hashA); got == nil || got.RevokedAt == nil || !got.RevokedAt.Equal(first) {
		t.Errorf("a second revoke moved RevokedAt from %v to %+v", first, got)
	}
	if got, _ := ks.KeyByHash(ctx, hashC); got == nil || got.RevokedAt != nil {
		t.Errorf("revoking one key revoked another of the tenant: %+v", got)
	}
	if keys, _ := ks.Keys(ctx, "acme"); len(keys) != 2 || keys[0].RevokedAt == nil {
		t.Errorf("Keys lists %+v; want the revoked key listed, revoked", keys)
	}
	// Revoked keys keep the server in keyed mode.
	if err := ks.RevokeKey(ctx, "", b.ID); err != nil {
		t.Fatal(err)
	}
	if err := ks.RevokeKey(ctx, "", c.ID); err != nil {
		t.Fatal(err)
	}
	if has, err := ks.HasKeys(ctx); err != nil || !has {
		t.Errorf("HasKeys with every key revoked = %v, %v; want true", has, err)
	}
}
