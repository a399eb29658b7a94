package http

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
	"github.com/memento-ai/memento/profile"
)

// ProfileRoutes are the dependencies of the profile and event routes.
type ProfileRoutes struct {
	Events   memento.EventService
	Profiles memento.ProfileService
	// EventJobs returns the jobsFor of one AddEvents call for a user: the
	// background jobs the new events enqueue in their transaction
	// (profile.EventJobs, plus those of other components). Nil enqueues
	// none.
	EventJobs func(s memento.Scope) func(memento.Event) []memento.JobRequest
}

type eventsPostInput struct {
	TenantHeader
	User    string `path:"user" doc:"User id"`
	RawBody []byte `contentType:"application/octet-stream"`
}

type eventsPostOutput struct {
	Status int
	Body   struct {
		Received   int `json:"received" doc:"Events in the request"`
		Inserted   int `json:"inserted" doc:"Events stored now"`
		Duplicates int `json:"duplicates" doc:"Events whose id was stored before, left as they were"`
	}
}

type eventsListInput struct {
	TenantHeader
	User string `path:"user"`
}

type eventsListOutput struct {
	Body struct {
		Events []memento.Event `json:"events"`
	}
}

type profileInput struct {
	TenantHeader
	User string `path:"user"`
}

type profileOutput struct {
	ETag string `header:"ETag" doc:"The profile's version, for If-Match"`
	Body *memento.Profile
}

type profileWriteInput struct {
	TenantHeader
	User    string `path:"user"`
	IfMatch string `header:"If-Match" doc:"Version the change is based on (the ETag of a GET); 409 when the profile has moved on"`
	Body    struct {
		Keys map[string]json.RawMessage `json:"keys" doc:"Keys to set (marked source user); with PATCH, null deletes a key"`
	}
}

// etag renders a profile version as a strong entity tag.
func etag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

// ifMatch reads an If-Match header: "" and "*" match any version.
func ifMatch(h string) (*int64, error) {
	h = strings.TrimSpace(h)
	if h == "" || h == "*" {
		return nil, nil
	}
	v, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(h, "W/"), `"`), 10, 64)
	if err != nil || v < 0 {
		return nil, memento.Errorf(memento.EINVALID, `If-Match must be the profile's ETag, such as "3", got %s`, h)
	}
	return &v, nil
}

// RegisterProfile adds the event and profile routes:
//
//	POST  /v1/users/{user}/events   one event or a list; 202 once stored
//	GET   /v1/users/{user}/events   the user's events in the order they happened
//	GET   /v1/users/{user}/profile  the profile, with its version as ETag
//	PUT   /v1/users/{user}/profile  replace the user-set keys (If-Match: 409 when stale)
//	PATCH /v1/users/{user}/profile  set keys, null deletes one (If-Match: 409 when stale)
func RegisterProfile(deps ProfileRoutes) func(api huma.API, s *Server) {
	return func(api huma.API, s *Server) {
		huma.Register(api, huma.Operation{
			OperationID: "postEvents", Method: http.MethodPost, Path: "/v1/users/{user}/events",
			Summary: "Record what a user did", Tags: []string{"profile"},
			Description:   "Stores one event or a list of them: types watched, rated (value 0.5-5), liked, disliked, watchlisted, skipped, abandoned (value: fraction watched), finished, on catalog titles. Idempotent by id. The user's profile is learned again in the background.",
			DefaultStatus: http.StatusAccepted,
			Errors:        []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge},
			// The body is one event or a list; ParseEvents reads it, so
			// its errors name the event and the field.
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{
				Description: `One event {"id","type","title","value","at"} or a list of them`,
			}}}},
		}, func(ctx context.Context, in *eventsPostInput) (*eventsPostOutput, error) {
			events, err := profile.ParseEvents(in.RawBody)
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			if err := profile.CheckEvents(ctx, events, s.Catalog); err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			sc := memento.Scope{Tenant: in.tenant(), User: in.User}
			var jobs func(memento.Event) []memento.JobRequest
			if deps.EventJobs != nil {
				jobs = deps.EventJobs(sc)
			}
			n, err := deps.Events.AddEvents(ctx, sc, events, jobs)
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			out := &eventsPostOutput{Status: http.StatusAccepted}
			out.Body.Received, out.Body.Inserted, out.Body.Duplicates = len(events), n, len(events)-n
			return out, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "listEvents", Method: http.MethodGet, Path: "/v1/users/{user}/events",
			Summary: "List a user's events in the order they happened", Tags: []string{"profile"},
		}, func(ctx context.Context, in *eventsListInput) (*eventsListOutput, error) {
			events, err := deps.Events.Events(ctx, memento.Scope{Tenant: in.tenant(), User: in.User})
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			out := &eventsListOutput{}
			out.Body.Events = nonNilSlice(events)
			return out, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "getProfile", Method: http.MethodGet, Path: "/v1/users/{user}/profile",
			Summary: "Get a user's profile", Tags: []string{"profile"},
			Description: "The key-value profile learned from the user's events, each key with its source (learned or user) and the events that support it. The ETag header is the profile's version.",
		}, func(ctx context.Context, in *profileInput) (*profileOutput, error) {
			p, err := deps.Profiles.Profile(ctx, memento.Scope{Tenant: in.tenant(), User: in.User})
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			return &profileOutput{ETag: etag(p.Version), Body: p}, nil
		})
		write := func(replace bool) func(ctx context.Context, in *profileWriteInput) (*profileOutput, error) {
			return func(ctx context.Context, in *profileWriteInput) (*profileOutput, error) {
				version, err := ifMatch(in.IfMatch)
				if err != nil {
					return nil, Error(ctx, s.Logger, err)
				}
				u := memento.ProfileUpdate{IfVersion: version, Replace: replace, Set: map[string]json.RawMessage{}}
				for _, k := range sortedKeys(in.Body.Keys) {
					v := in.Body.Keys[k]
					if string(v) == "null" {
						if replace {
							return nil, Error(ctx, s.Logger, memento.Errorf(memento.EINVALID, "keys.%s: null deletes a key only with PATCH; leave the key out of a PUT", k))
						}
						u.Delete = append(u.Delete, k)
						continue
					}
					if err := profile.CheckValue(k, v); err != nil {
						return nil, Error(ctx, s.Logger, err)
					}
					// Profile values reach prompts: one carrying instructions is refused.
					found := hygiene.JSONStrings("keys."+k, v)
					if reasons := hygiene.CheckStored(k); len(reasons) > 0 {
						found = append(found, hygiene.Finding{Item: "keys." + k, Reason: strings.Join(reasons, "; ")})
					}
					if len(found) > 0 {
						return nil, Error(ctx, s.Logger, hygiene.Refuse("the profile update", found))
					}
					u.Set[k] = v
				}
				p, err := deps.Profiles.UpdateProfile(ctx, memento.Scope{Tenant: in.tenant(), User: in.User}, u)
				if err != nil {
					return nil, Error(ctx, s.Logger, err)
				}
				return &profileOutput{ETag: etag(p.Version), Body: p}, nil
			}
		}
		huma.Register(api, huma.Operation{
			OperationID: "putProfile", Method: http.MethodPut, Path: "/v1/users/{user}/profile",
			Summary: "Replace the keys a user set", Tags: []string{"profile"},
			Description: "Sets the given keys as the user's (source user: learners never overwrite them) and removes the user's other keys; learned keys stay. Send If-Match with the ETag of a GET to fail with 409 when the profile changed since.",
			Errors:      []int{http.StatusBadRequest, http.StatusConflict},
		}, write(true))
		huma.Register(api, huma.Operation{
			OperationID: "patchProfile", Method: http.MethodPatch, Path: "/v1/users/{user}/profile",
			Summary: "Set or delete profile keys", Tags: []string{"profile"},
			Description: "Sets the given keys as the user's; a null value deletes the key, whoever set it (a learner may learn it again: set an empty value to keep it away). Send If-Match with the ETag of a GET to fail with 409 when the profile changed since.",
			Errors:      []int{http.StatusBadRequest, http.StatusConflict},
		}, write(false))
	}
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
