package http

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/memento-ai/memento"
)

// SnapshotHooks connect the API to the snapshots of `serve --snapshot`.
type SnapshotHooks struct {
	// Ensure restores a user unknown to the local store before a request
	// about them runs (snapshot.Restorer.Ensure). Its error fails the
	// request.
	Ensure func(ctx context.Context, s memento.Scope) error
	// Changed is told about the user of every successful write request,
	// after it ran (snapshot.WriteBehind.Notify).
	Changed func(s memento.Scope)
	// Deleted is told about a user deleted by DELETE /v1/users/{user}
	// (snapshot.Restorer.Forget), before Changed.
	Deleted func(s memento.Scope)
}

// RegisterSnapshots adds a middleware to every operation registered after
// it: it finds the user a request is about (the {user} path parameter, the
// user query parameter, or the "user" field of a JSON body such as POST
// /v1/chat's), restores the user from the snapshot store on first access,
// and reports the user of a successful write as changed. It must come
// first in Server.Routes so that it wraps the other routes.
func RegisterSnapshots(h SnapshotHooks) func(api huma.API, s *Server) {
	return func(api huma.API, s *Server) {
		api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
			sc, ok := requestUser(ctx)
			if !ok {
				next(ctx)
				return
			}
			if h.Ensure != nil {
				// An id the store would refuse is refused before a
				// restore looks it up.
				err := memento.CheckID("user id", sc.User)
				if err == nil {
					err = memento.CheckID("tenant id", sc.Tenant)
				}
				if err == nil {
					err = h.Ensure(ctx.Context(), sc)
				}
				if err != nil {
					e := Error(ctx.Context(), s.Logger, err)
					status := http.StatusInternalServerError
					if se, ok := e.(huma.StatusError); ok {
						status = se.GetStatus()
					}
					_ = huma.WriteErr(api, ctx, status, memento.ErrorMessage(err))
					return
				}
			}
			next(ctx)
			if ctx.Method() == http.MethodGet || ctx.Method() == http.MethodHead || ctx.Status() >= 400 {
				return
			}
			if h.Deleted != nil && ctx.Method() == http.MethodDelete && ctx.Operation().Path == "/v1/users/{user}" {
				h.Deleted(sc)
			}
			if h.Changed != nil {
				h.Changed(sc)
			}
		})
	}
}

// requestUser finds the user a request is about.
func requestUser(ctx huma.Context) (memento.Scope, bool) {
	tenant := ctx.Header("X-Memento-Tenant")
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	if u := ctx.Param("user"); u != "" {
		return memento.Scope{Tenant: tenant, User: u}, true
	}
	if u := ctx.Query("user"); u != "" {
		return memento.Scope{Tenant: tenant, User: u}, true
	}
	switch ctx.Method() {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return memento.Scope{}, false
	}
	r, _ := humago.Unwrap(ctx)
	if r.Body == nil {
		return memento.Scope{}, false
	}
	body, err := io.ReadAll(r.Body) // bounded by the server's MaxBytesReader
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return memento.Scope{}, false
	}
	var peek struct {
		User string `json:"user"`
	}
	if json.Unmarshal(body, &peek) != nil || peek.User == "" {
		return memento.Scope{}, false
	}
	return memento.Scope{Tenant: tenant, User: peek.User}, true
}
