package memento

import (
	"context"
	"sync"
)

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

type tenantKey struct{}

// WithTenant returns ctx marked as work for tenant. What is counted per
// tenant deep in a call (the language-model budget of llm/budget) reads
// it: the HTTP server marks each request with the tenant it acts for, and
// the job queue each job with the tenant the job was enqueued for.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant ctx is marked with, if any.
func TenantFrom(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tenantKey{}).(string)
	return t, ok && t != ""
}

// TokenMeter adds up the tokens of the language-model requests made with
// one context, so that a caller can charge them to a tenant (llm/budget).
// A provider that learns a request's token counts calls CountTokens.
type TokenMeter struct {
	mu                 sync.Mutex
	prompt, completion int64
}

type tokenMeterKey struct{}

// WithTokenMeter returns ctx with a new meter, which hides any meter
// already in ctx, and the meter.
func WithTokenMeter(ctx context.Context) (context.Context, *TokenMeter) {
	m := &TokenMeter{}
	return context.WithValue(ctx, tokenMeterKey{}, m), m
}

// CountTokens adds a request's tokens to ctx's meter, if it has one.
func CountTokens(ctx context.Context, prompt, completion int64) {
	m, ok := ctx.Value(tokenMeterKey{}).(*TokenMeter)
	if !ok {
		return
	}
	m.mu.Lock()
	m.prompt += max(prompt, 0)
	m.completion += max(completion, 0)
	m.mu.Unlock()
}

// Tokens returns the prompt and completion tokens counted so far.
func (m *TokenMeter) Tokens() (prompt, completion int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.prompt, m.completion
}
