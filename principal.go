package memento

import "context"

// KeyRole is what an API key may do.
type KeyRole string

// The roles of API keys: read keys only read, write keys read and write,
// admin keys also manage keys.
const (
	KeyRead  KeyRole = "read"
	KeyWrite KeyRole = "write"
	KeyAdmin KeyRole = "admin"
)

// Valid reports whether r is one of the key roles.
func (r KeyRole) Valid() bool { return r == KeyRead || r == KeyWrite || r == KeyAdmin }

// Principal is who a request acts for: the API key it carried, or, in
// open mode (no keys, loopback only), nobody in particular.
type Principal struct {
	// KeyID names the key (never the key itself); empty in open mode.
	KeyID string
	// Tenant is the key's tenant. In open mode it is empty and the request
	// names its tenant itself.
	Tenant string
	// User, when set, is the one user the key reaches.
	User string
	Role KeyRole
	// Open is set when the server runs without keys.
	Open bool
}

// CanWrite reports whether the principal may change data.
func (p Principal) CanWrite() bool { return p.Open || p.Role == KeyWrite || p.Role == KeyAdmin }

// Reaches checks that the principal may act on scope s: a key of another
// tenant, or one scoped to another user, gets ENOTFOUND or EFORBIDDEN, never
// the data. An open principal reaches every scope.
func (p Principal) Reaches(s Scope) error {
	if p.Open {
		return nil
	}
	if s.Tenant != p.Tenant {
		return Errorf(EFORBIDDEN, "this key belongs to another tenant")
	}
	if p.User != "" && s.User != "" && s.User != p.User {
		return Errorf(EFORBIDDEN, "this key reaches only user %q", p.User)
	}
	return nil
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries, if any.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
