package memento

import (
	"context"
	"encoding/json"
	"time"
)

// Job kinds of the profile memory. Each is handled by one worker of
// package profile.
const (
	// JobProfile recomputes one user's learned profile keys from their
	// events. It is enqueued with the events, in the same transaction.
	JobProfile = "profile"
	// JobProfileModel recomputes a tenant's title co-occurrence model
	// ("people who liked X also liked Y") from every user's events.
	JobProfileModel = "profile-model"
	// JobMessageEvents reads the actions a user reports in a message ("I
	// watched Heat and loved it") and stores them as events.
	JobMessageEvents = "message-events"
)

// Sources of a profile key.
const (
	ProfileLearned = "learned" // computed by a learner from the user's events
	ProfileUser    = "user"    // set by the user; learners never overwrite it
)

// ProfileEntry is one key of a profile: its value, who set it and the
// events that support it.
type ProfileEntry struct {
	// Value is the key's JSON value; package profile documents the shape
	// of every key its learners produce. Users may set other keys with
	// any JSON value.
	Value json.RawMessage `json:"value"`
	// Source is ProfileLearned or ProfileUser.
	Source string `json:"source"`
	// Evidence lists the ids of the events the value was learned from,
	// oldest first; user-set keys have none.
	Evidence  []string  `json:"evidence"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Profile is the key-value memory of a user learned from their actions
// (DESIGN.md 2.4). Version grows with every change, so writers can detect
// a stale read; a user without a profile has version 0 and no keys. Its
// JSON shape is a contract.
type Profile struct {
	Tenant    string                  `json:"tenant,omitempty"`
	User      string                  `json:"user"`
	Version   int64                   `json:"version"`
	Keys      map[string]ProfileEntry `json:"keys"`
	UpdatedAt time.Time               `json:"updatedAt,omitzero"`
}

// ProfileUpdate is a change of the user-set keys of a profile.
type ProfileUpdate struct {
	// IfVersion, when set, makes the update fail with ECONFLICT unless
	// the stored profile has this version.
	IfVersion *int64
	// Replace removes every user-set key not in Set (PUT); otherwise the
	// update only touches the keys it names (PATCH).
	Replace bool
	// Set gives keys their values and marks them as set by the user.
	Set map[string]json.RawMessage
	// Delete removes keys, whoever set them. A learner may learn a
	// deleted key again; to keep it away, set it to an empty value.
	Delete []string
}

// ProfileService keeps profiles.
type ProfileService interface {
	// Profile returns the user's profile: an empty one at version 0 when
	// the user has none. Errors: EINVALID for an empty user id.
	Profile(ctx context.Context, s Scope) (*Profile, error)
	// SaveLearned replaces the learned keys of the profile with keys,
	// leaving user-set keys alone (a learned key the user has set is not
	// written). The version grows only when something changed. Errors:
	// EINVALID; ENOTFOUND for a user that does not exist (forgotten while
	// the keys were learned from their events), for whom nothing is
	// written.
	SaveLearned(ctx context.Context, s Scope, keys map[string]ProfileEntry) (*Profile, error)
	// UpdateProfile changes the user-set keys. Errors: EINVALID for a
	// bad key name or value, ECONFLICT when IfVersion is stale.
	UpdateProfile(ctx context.Context, s Scope, u ProfileUpdate) (*Profile, error)
}

// ProfileModel is a model learned over every user's events of a tenant,
// such as the title co-occurrence model that ranking reads ("people who
// liked X also liked Y"). Data is the model in its owner's encoding.
type ProfileModel struct {
	Tenant string
	Name   string
	// Version grows with every save, so readers can cache a decoded model
	// and ask only for the version before each use.
	Version int64
	// EventsMark is the tenant's events mark (see ProfileModelService)
	// when the model was learned: a model whose mark equals the current
	// one has seen every event.
	EventsMark int64
	Data       []byte
}

// ProfileModelService keeps the models learned over all users' events.
type ProfileModelService interface {
	// ProfileModel returns the named model of a tenant, or nil when there
	// is none.
	ProfileModel(ctx context.Context, tenant, name string) (*ProfileModel, error)
	// ProfileModelVersion returns the model's version, 0 when there is
	// none. It is cheap.
	ProfileModelVersion(ctx context.Context, tenant, name string) (int64, error)
	// SaveProfileModel replaces the model and returns its new version:
	// the previous one plus one, or m.Version with keepVersion (a model
	// restored from a snapshot). Errors: EINVALID for an empty name.
	SaveProfileModel(ctx context.Context, m ProfileModel, keepVersion bool) (int64, error)
	// EventsMark returns a number that grows whenever an event is added
	// to the tenant.
	EventsMark(ctx context.Context, tenant string) (int64, error)
	// EachUserEvents calls fn with every user's events, one user at a
	// time, each user's events in the order they happened, and returns
	// the events mark of what it read. The slice is fn's only during the
	// call: a store may reuse it for the next user.
	EachUserEvents(ctx context.Context, tenant string, fn func(user string, events []Event) error) (int64, error)
}
