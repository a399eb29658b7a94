package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// testCopy checks what a copy of a whole store (memento migrate) reads
// beyond the per-user export: the tenants with users, and API keys with
// their hashes, times and revocations, stored once however often they
// are imported.
func testCopy(t *testing.T, open Opener) {
	st := open(t)
	tl, ok1 := st.(memento.TenantLister)
	kc, ok2 := st.(memento.KeyCopier)
	if !ok1 || !ok2 {
		t.Skip("the store does not implement memento.TenantLister and memento.KeyCopier")
	}
	ctx := t.Context()
	if ts, err := tl.Tenants(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("Tenants of a new store = %v, %v; want none", ts, err)
	}
	for _, s := range []memento.Scope{{Tenant: "globex", User: "b"}, {Tenant: "acme", User: "a"}, {Tenant: "acme", User: "b"}, {Tenant: "Zeta", User: "z"}} {
		if _, err := st.EnsureUser(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := tl.Tenants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Zeta", "acme", "globex"}, ts); diff != "" {
		t.Errorf("Tenants (-want +got), byte order:\n%s", diff)
	}

	a, _, hashA, err := memento.NewAPIKey("acme", "", memento.KeyAdmin, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, _, hashB, err := memento.NewAPIKey("globex", "b", memento.KeyRead, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	revoked := t0.Add(time.Minute)
	b.RevokedAt = &revoked
	in := []memento.StoredKey{{APIKey: a, Hash: hashA}, {APIKey: b, Hash: hashB}}
	if n, err := kc.ImportKeys(ctx, in); err != nil || n != 2 {
		t.Fatalf("ImportKeys = %d, %v; want 2 stored", n, err)
	}
	if n, err := kc.ImportKeys(ctx, in); err != nil || n != 0 {
		t.Errorf("ImportKeys again = %d, %v; want 0 stored, the ids are there", n, err)
	}
	out, err := kc.ExportKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("ExportKeys after ImportKeys (-imported +exported):\n%s", diff)
	}
	// The revoked key stays revoked: it authenticates nobody.
	got, err := st.(memento.KeyStore).KeyByHash(ctx, hashB)
	if err != nil || got.RevokedAt == nil {
		t.Errorf("the imported revoked key = %+v, %v; want revoked", got, err)
	}
	other, _, _, err := memento.NewAPIKey("acme", "", memento.KeyRead, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.ImportKeys(ctx, []memento.StoredKey{{APIKey: other, Hash: hashA}}); memento.ErrorCode(err) != memento.ECONFLICT {
		t.Errorf("importing another key under a stored hash = %v, want ECONFLICT", err)
	}
	if _, err := kc.ImportKeys(ctx, []memento.StoredKey{{APIKey: other}}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("importing a key without a hash = %v, want EINVALID", err)
	}
}
