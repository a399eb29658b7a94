package http

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/prefs"
)

// The preference routes name the tenant header as a field of their own:
// huma skips unexported embedded structs, so a TenantHeader embedded in an
// input is never read.
type preferencesInput struct {
	Tenant string `header:"X-Memento-Tenant" doc:"Tenant of the request (default: default)"`
	User   string `path:"user" doc:"User id"`
}

// prefScope is the scope of a request's tenant and user.
func prefScope(tenant, user string) memento.Scope {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	return memento.Scope{Tenant: tenant, User: user}
}

type preferencesOutput struct {
	Body []memento.Preference
}

type preferenceClustersOutput struct {
	Body []memento.PreferenceCluster
}

type preferenceInput struct {
	Tenant string `header:"X-Memento-Tenant" doc:"Tenant of the request (default: default)"`
	User   string `path:"user" doc:"User id"`
	ID     string `path:"id" doc:"Preference id, such as pref_3f2a..."`
}

// PreferencePatch is the body of PATCH /v1/users/{user}/preferences/{id}:
// the fields to change.
type PreferencePatch struct {
	Weight  *float64 `json:"weight,omitempty" required:"false" doc:"New signed weight: positive likes, negative dislikes (from -3 to 3); restarts the memory's decay"`
	Concept *string  `json:"concept,omitempty" required:"false" maxLength:"200" doc:"New concept text; it is embedded again"`
}

type patchPreferenceInput struct {
	Tenant string `header:"X-Memento-Tenant" doc:"Tenant of the request (default: default)"`
	User   string `path:"user" doc:"User id"`
	ID     string `path:"id" doc:"Preference id"`
	Body   PreferencePatch
}

type preferenceOutput struct {
	Body *memento.Preference
}

// RegisterPreferences adds the routes of the preference memory: a user's
// preferences with their effective weights (faded ones flagged, not
// hidden), their clusters with directional descriptions and stances, and
// the edits the web UI makes.
func RegisterPreferences(svc *prefs.Service) func(api huma.API, s *Server) {
	return func(api huma.API, s *Server) {
		huma.Register(api, huma.Operation{
			OperationID: "listPreferences", Method: http.MethodGet, Path: "/v1/users/{user}/preferences",
			Summary: "List a user's preference memories, strongest first", Tags: []string{"preferences"},
			Description: "Each preference is a normalised concept with its stored signed weight, its effective weight after decay, " +
				"its kind (taste or fact), whether it has faded, how much evidence formed it, its cluster and its sources. " +
				"The array has the shape of `memento prefs list --json`.",
		}, func(ctx context.Context, in *preferencesInput) (*preferencesOutput, error) {
			ps, err := svc.Preferences(ctx, prefScope(in.Tenant, in.User))
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			return &preferencesOutput{Body: nonNilSlice(ps)}, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "listPreferenceClusters", Method: http.MethodGet, Path: "/v1/users/{user}/preference-clusters",
			Summary: "List a user's preference clusters, most confident first", Tags: []string{"preferences"},
			Description: "Clusters group related preferences (DBSCAN over their vectors). Each has a directional description, " +
				"a confidence and strength bucket (strong, mild, mixed) and a support/oppose stance per member. " +
				"The array has the shape of `memento prefs clusters --json`.",
		}, func(ctx context.Context, in *preferencesInput) (*preferenceClustersOutput, error) {
			cs, err := svc.Clusters(ctx, prefScope(in.Tenant, in.User))
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			return &preferenceClustersOutput{Body: nonNilSlice(cs)}, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "patchPreference", Method: http.MethodPatch, Path: "/v1/users/{user}/preferences/{id}",
			Summary: "Change a preference's weight or concept", Tags: []string{"preferences"},
			Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		}, func(ctx context.Context, in *patchPreferenceInput) (*preferenceOutput, error) {
			if in.Body.Weight == nil && in.Body.Concept == nil {
				return nil, Error(ctx, s.Logger, memento.Errorf(memento.EINVALID, "a preference patch needs a weight or a concept"))
			}
			p, err := svc.Patch(ctx, prefScope(in.Tenant, in.User), in.ID, in.Body.Concept, in.Body.Weight)
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			return &preferenceOutput{Body: p}, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "deletePreference", Method: http.MethodDelete, Path: "/v1/users/{user}/preferences/{id}",
			Summary: "Forget a preference", Tags: []string{"preferences"}, DefaultStatus: http.StatusNoContent,
			Errors: []int{http.StatusNotFound},
		}, func(ctx context.Context, in *preferenceInput) (*struct{}, error) {
			if err := svc.Delete(ctx, prefScope(in.Tenant, in.User), in.ID); err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			return nil, nil
		})
	}
}
