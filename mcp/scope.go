package mcp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memento-ai/memento"
)

// tenantHeader is the header that names the tenant of an HTTP request in
// open mode; with an API key the tenant is the key's.
const tenantHeader = "X-Memento-Tenant"

// principal returns who the call acts for: the principal the request's
// context carries (set by the HTTP server's authentication), else the
// server's own (stdio with a key), else none.
func (s *Server) principal(ctx context.Context) (memento.Principal, bool) {
	if p, ok := memento.PrincipalFrom(ctx); ok {
		return p, true
	}
	if s.Principal != nil {
		return *s.Principal, true
	}
	return memento.Principal{}, false
}

// access says what a tool does with the user's data.
type access int

const (
	read access = iota
	write
)

// scope resolves the tenant and user a call acts on and checks that the
// caller may: a key's tenant is the tenant (a header naming another is
// refused), a key scoped to one user supplies the user when the call names
// none and refuses any other, and a read key may not write. Without a key
// the tenant is the X-Memento-Tenant header's, else the server's. It then
// lets the hooks restore an unknown user. Errors: EINVALID, EFORBIDDEN.
func (s *Server) scope(ctx context.Context, req *sdk.CallToolRequest, user string, a access) (memento.Scope, error) {
	header := ""
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		header = strings.TrimSpace(req.Extra.Header.Get(tenantHeader))
	}
	p, keyed := s.principal(ctx)
	var sc memento.Scope
	if keyed && !p.Open {
		if header != "" && header != p.Tenant {
			return sc, memento.Errorf(memento.EFORBIDDEN, "this key belongs to another tenant than %s names", tenantHeader)
		}
		sc.Tenant = p.Tenant
		if user == "" {
			user = p.User
		}
	} else {
		sc.Tenant = header
		if sc.Tenant == "" {
			sc.Tenant = s.Tenant
		}
	}
	if sc.Tenant == "" {
		sc.Tenant = memento.DefaultTenant
	}
	if user == "" {
		return sc, memento.Errorf(memento.EINVALID, "user is required: name the user the memory belongs to")
	}
	sc.User = user
	if err := memento.CheckID("user", sc.User); err != nil {
		return sc, err
	}
	if err := memento.CheckID("tenant", sc.Tenant); err != nil {
		return sc, err
	}
	if keyed {
		if err := p.Reaches(sc); err != nil {
			return sc, err
		}
		if a == write && !p.CanWrite() {
			return sc, memento.Errorf(memento.EFORBIDDEN, "this key may only read; a write or admin key may change memory")
		}
	}
	if s.Hooks.Ensure != nil {
		if err := s.Hooks.Ensure(ctx, sc); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// changed tells the hooks that a write to sc succeeded.
func (s *Server) changed(sc memento.Scope) {
	if s.Hooks.Changed != nil {
		s.Hooks.Changed(sc)
	}
}

// ErrorDocument is the text of a tool error: Memento's one error shape, as
// the REST API renders it.
type ErrorDocument struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error's code and its message for a person.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// toolError is an error rendered as a tool error's text.
type toolError struct{ doc ErrorDocument }

func (e *toolError) Error() string {
	b, _ := json.Marshal(e.doc)
	return string(b)
}

// fail turns a service's error into the tool error an agent sees: its
// code and user-facing message. Internal detail goes to the log only.
func (s *Server) fail(ctx context.Context, tool string, err error) error {
	code := memento.ErrorCode(err)
	if code == memento.EINTERNAL {
		s.Logger.ErrorContext(ctx, "mcp tool failed", "tool", tool, "err", err)
	}
	return &toolError{ErrorDocument{ErrorDetail{Code: code, Message: memento.ErrorMessage(err)}}}
}

// ParseError reads the text of a tool error back into a *memento.Error,
// for clients of the server written in Go. A text that is not an error
// document yields an EINTERNAL error carrying it.
func ParseError(text string) *memento.Error {
	var doc ErrorDocument
	if err := json.Unmarshal([]byte(text), &doc); err != nil || doc.Error.Code == "" {
		return &memento.Error{Code: memento.EINTERNAL, Message: text}
	}
	return &memento.Error{Code: doc.Error.Code, Message: doc.Error.Message}
}
