package sqlite_test

import (
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// The key store itself is tested by the conformance suite (storetest,
// part Keys), on every store.

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
