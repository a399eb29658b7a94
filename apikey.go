package memento

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
)

// API keys authenticate the callers of `memento serve` (REST, MCP and the
// web UI). A key is 32 random bytes (256 bits) written as "mk_" and
// base64url; the store keeps only its SHA-256, which for a secret of that
// entropy cannot be reversed or guessed, so a leaked database leaks no key.
// The key itself is shown once, when it is created.

// KeyPrefix begins every API key, so a key in a log or a repository is
// recognisable as one.
const KeyPrefix = "mk_"

// keySecretBytes is the randomness of a key: 256 bits.
const keySecretBytes = 32

// APIKey is a stored API key, without its secret.
type APIKey struct {
	// ID names the key in lists, logs and revocations; it is not secret.
	ID     string  `json:"id"`
	Tenant string  `json:"tenant"`
	User   string  `json:"user,omitempty"`
	Role   KeyRole `json:"role"`
	// CreatedAt is when the key was made; RevokedAt, when set, when it
	// stopped working.
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// Principal is who a request carrying k acts for.
func (k APIKey) Principal() Principal {
	return Principal{KeyID: k.ID, Tenant: k.Tenant, User: k.User, Role: k.Role}
}

// NewAPIKey makes a key for tenant (and, when user is set, for that user
// only) with role, and returns it, its secret (shown to the operator
// once) and the hash the store keeps. Errors: EINVALID for a bad tenant,
// user or role.
func NewAPIKey(tenant, user string, role KeyRole, now time.Time) (APIKey, string, string, error) {
	if err := CheckID("tenant id", tenant); err != nil {
		return APIKey{}, "", "", err
	}
	if user != "" {
		if err := CheckID("user id", user); err != nil {
			return APIKey{}, "", "", err
		}
	}
	if role == "" {
		role = KeyWrite
	}
	if !role.Valid() {
		return APIKey{}, "", "", Errorf(EINVALID, "role must be admin, write or read, got %q", role)
	}
	secret := make([]byte, keySecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return APIKey{}, "", "", WrapError(EINTERNAL, err, "no randomness for a new key")
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return APIKey{}, "", "", WrapError(EINTERNAL, err, "no randomness for a new key")
	}
	key := KeyPrefix + base64.RawURLEncoding.EncodeToString(secret)
	k := APIKey{ID: "key_" + hex.EncodeToString(id), Tenant: tenant, User: user, Role: role, CreatedAt: now.UTC()}
	return k, key, HashAPIKey(key), nil
}

// HashAPIKey is what the store keeps of key, and what a request's key is
// looked up by.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// LooksLikeAPIKey reports whether s has the form of a key; a bearer token
// of another form is refused without a store lookup.
func LooksLikeAPIKey(s string) bool {
	return strings.HasPrefix(s, KeyPrefix) && len(s) == len(KeyPrefix)+base64.RawURLEncoding.EncodedLen(keySecretBytes)
}

// KeyStore keeps API keys by their hash.
type KeyStore interface {
	// CreateKey stores k under hash. Errors: ECONFLICT for an id or hash
	// already stored.
	CreateKey(ctx context.Context, k APIKey, hash string) error
	// KeyByHash returns the key stored under hash, revoked or not.
	// Errors: ENOTFOUND.
	KeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// Keys lists the keys of tenant (every tenant's when empty), revoked
	// included, oldest first.
	Keys(ctx context.Context, tenant string) ([]APIKey, error)
	// RevokeKey stops key id of tenant (of any tenant when empty) from
	// working; revoking a revoked key changes nothing. Errors: ENOTFOUND.
	RevokeKey(ctx context.Context, tenant, id string) error
	// HasKeys reports whether any key was ever created, revoked ones
	// included: a server that once needed keys does not fall back to open
	// mode when the last one is revoked.
	HasKeys(ctx context.Context) (bool, error)
}

// StoredKey is a key as a store keeps it: its description and the hash
// of its secret. Only a copy of a whole store (memento migrate) reads it.
type StoredKey struct {
	APIKey
	Hash string `json:"hash"`
}

// Validate refuses a stored key no store should hold. Errors: EINVALID.
func (k StoredKey) Validate() error {
	switch {
	case k.ID == "" || k.Hash == "":
		return Errorf(EINVALID, "key %q: a key needs an id and a hash", k.ID)
	case !k.Role.Valid():
		return Errorf(EINVALID, "key %q: role must be admin, write or read, got %q", k.ID, k.Role)
	case k.CreatedAt.IsZero():
		return Errorf(EINVALID, "key %q has no creation time", k.ID)
	}
	return CheckID("tenant id", k.Tenant)
}

// KeyCopier copies keys between stores: a key keeps its id, hash, times
// and revocation, so a client's key works against the copy.
type KeyCopier interface {
	// ExportKeys lists every key of every tenant with its hash, oldest
	// first.
	ExportKeys(ctx context.Context) ([]StoredKey, error)
	// ImportKeys stores keys as they are, revoked ones revoked, and
	// skips those whose id is already stored; it returns how many it
	// stored. Errors: EINVALID for a key without id, hash or a valid
	// role; ECONFLICT for a hash stored under another id.
	ImportKeys(ctx context.Context, keys []StoredKey) (int, error)
}

// TenantLister lists the tenants a store holds users of.
type TenantLister interface {
	// Tenants lists every tenant with at least one user, in order.
	Tenants(ctx context.Context) ([]string, error)
}
