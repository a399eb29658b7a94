package memento

import (
	"context"
	"time"
)

// Job kinds of the preference memory.
const (
	// JobPreferences extracts the likes and dislikes of one user message
	// (payload MessageJob) and stores or reinforces them.
	JobPreferences = "preferences"
	// JobPreferencesFromEvents turns a liked, disliked, rated or abandoned
	// title into preferences for its genres, people and plot (payload
	// PreferenceEventJob).
	JobPreferencesFromEvents = "preferences-from-events"
	// JobPreferenceClusters regroups a user's preferences into described
	// clusters (payload PreferenceClusterJob). Stores enqueue it themselves
	// when a user's preferences change, at most one pending job per user.
	JobPreferenceClusters = "preference-clusters"
)

// Stances of a cluster member towards its cluster's direction.
const (
	StanceSupport = "support"
	StanceOppose  = "oppose"
)

// Strength buckets of a preference cluster, as prompts show them.
const (
	StrengthStrong = "strong" // confident, and the members agree
	StrengthMild   = "mild"   // little weight or evidence so far
	StrengthMixed  = "mixed"  // substantial evidence pulls both ways
)

// PreferenceEventJob is the payload of JobPreferencesFromEvents: the event
// itself, so the worker needs no second read.
type PreferenceEventJob struct {
	Tenant string `json:"tenant"`
	User   string `json:"user"`
	Event  Event  `json:"event"`
}

// PreferenceClusterJob is the payload of JobPreferenceClusters.
type PreferenceClusterJob struct {
	Tenant string `json:"tenant"`
	User   string `json:"user"`
}

// Preference is one preference memory: a normalised concept ("heist",
// "very sweet desserts") with a signed weight (positive: likes, negative:
// dislikes) and the evidence behind it. Repeated statements about the same
// concept reinforce one memory instead of adding rows. Its JSON shape is a
// contract shared by `memento prefs list --json` and GET
// /v1/users/{user}/preferences; fields are added, never renamed.
type Preference struct {
	ID      string `json:"id"`
	Concept string `json:"concept"`
	// Weight is the stored signed weight as of LastSeen; EffectiveWeight
	// is what is left of it now, after decay.
	Weight          float64 `json:"weight"`
	EffectiveWeight float64 `json:"effectiveWeight"`
	// Kind is KindTaste or KindFact; it sets how fast the memory fades.
	Kind string `json:"kind"`
	// Faded is true when decay has left too little of the weight for the
	// memory to be used in prompts and ranking. Faded memories stay listed
	// and can be reinforced; decay deletes nothing.
	Faded bool `json:"faded"`
	// Evidence counts the statements and events that formed the memory.
	Evidence int `json:"evidence"`
	// Cluster is the id of the cluster the memory belongs to, nil when it
	// is in none (or has not been clustered yet).
	Cluster *string `json:"cluster"`
	// Sources are the ids of the messages and events the memory came from,
	// oldest first (the most recent MaxPreferenceSources of them).
	Sources []string `json:"sources"`
	// FirstSeen is when the memory was formed; LastSeen when it was last
	// reinforced (or set by the user), from which its age counts.
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	// Embedder is the id of the embedder that made Vector; vectors of
	// different embedders are never compared.
	Embedder string    `json:"-"`
	Vector   []float32 `json:"-"`
}

// MaxPreferenceSources bounds the source ids a preference keeps: a concept
// reinforced by hundreds of events keeps the newest ones (Evidence still
// counts them all).
const MaxPreferenceSources = 50

// PreferenceCluster is a group of related preferences with a directional
// description ("prefers heist and crime; dislikes horror") and each
// member's stance towards it. Its JSON shape is a contract shared by
// `memento prefs clusters --json` and GET
// /v1/users/{user}/preference-clusters.
type PreferenceCluster struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	// Confidence in [0, 1) grows with the members' effective weights and
	// their evidence; Strength buckets it for prompts.
	Confidence float64                   `json:"confidence"`
	Strength   string                    `json:"strength"`
	Members    []PreferenceClusterMember `json:"members"`
	// Version is the user's preference version the cluster was computed
	// from; Signature names its members and their signs, so an unchanged
	// cluster keeps its description without asking the model again.
	Version   int64     `json:"-"`
	Signature string    `json:"-"`
	CreatedAt time.Time `json:"-"`
}

// PreferenceClusterMember is one preference of a cluster and its stance.
type PreferenceClusterMember struct {
	Preference string `json:"preference"`
	Concept    string `json:"concept"`
	Stance     string `json:"stance"`
}

// PreferenceChanges are what a PreferenceMerge decides: memories to add and
// memories to rewrite.
type PreferenceChanges struct {
	// Insert holds new memories; the store assigns their ids.
	Insert []Preference
	// Update holds changed memories, matched by ID; their concept, weight,
	// kind, evidence, sources, vector and times are written as given.
	Update []Preference
}

// Empty reports whether the changes change nothing.
func (c PreferenceChanges) Empty() bool { return len(c.Insert) == 0 && len(c.Update) == 0 }

// PreferenceMerge decides how new evidence changes a user's preferences,
// given the stored preferences of one embedder. The store calls it inside
// its write transaction, so it must be quick and do no I/O.
type PreferenceMerge func(current []Preference) (PreferenceChanges, error)

// PreferenceWrite is new evidence about a user's preferences from one
// source.
type PreferenceWrite struct {
	// Source is the id of the message or event the evidence comes from. A
	// source is applied at most once: writing it again changes nothing.
	// Empty applies the write unconditionally.
	Source string
	// Embedder selects the stored preferences Merge sees.
	Embedder string
	Merge    PreferenceMerge
}

// PreferenceWriteResult reports what a PreferenceWrite did.
type PreferenceWriteResult struct {
	// Applied is false when the source had been applied before.
	Applied  bool
	Inserted []Preference
	Updated  []Preference
}

// PreferencePatch is a user's edit of one preference. Nil fields stay as
// they are. A new concept needs its new vector (and the embedder that made
// it); a new weight restarts the memory's age at At.
type PreferencePatch struct {
	Concept  *string
	Vector   []float32
	Embedder string
	Weight   *float64
	At       time.Time
}

// PreferenceVersion counts the changes to a user's preferences, and the
// version the stored clusters were computed from.
type PreferenceVersion struct {
	Version   int64
	Clustered int64
	// Since is when the user was created; zero before the user's first
	// preference write. A user deleted and created again counts its
	// versions from the start, so a cache of a user's preferences
	// compares Since as well as Version: one of the deleted user's must
	// never be taken for the new user's.
	Since time.Time
}

// PreferencesRead is one read of the preferences a user changed after a
// version (sqlite.DB.PreferencesSince): what an incremental clustering
// brings up to date.
type PreferencesRead struct {
	// Version is the user's counters as of the read; a zero Since means
	// the user does not exist.
	Version PreferenceVersion
	// Changed holds the preferences written or rewritten after the
	// version asked for (all of them when it was negative; rows loaded in
	// bulk or written before the version column are at version 0),
	// oldest first as Preferences lists them, without their cluster ids.
	Changed []Preference
	// Total counts all of the user's preferences at the read, changed or
	// not, so a caller that holds the earlier ones can tell whether one
	// was deleted.
	Total int
}

// PreferenceService keeps preference memories and their clusters. Every
// change to a user's preferences (a write that changes something, a patch,
// a deletion) increments the user's version and, in the same transaction,
// enqueues a JobPreferenceClusters job unless one is already pending, so
// bursts of changes are clustered once.
type PreferenceService interface {
	// WritePreferences applies w in one transaction, creating the user as
	// needed. Errors: EINVALID (no merge function, bad scope).
	WritePreferences(ctx context.Context, s Scope, w PreferenceWrite) (*PreferenceWriteResult, error)
	// WritePreferenceBatch applies ws in order in one transaction, each
	// as WritePreferences applies one (the Merge of each sees what the
	// writes before it left), so that the evidence of many messages costs
	// one write. Errors: EINVALID.
	WritePreferenceBatch(ctx context.Context, s Scope, ws []PreferenceWrite) ([]PreferenceWriteResult, error)
	// Preferences lists all of a user's preferences (of every embedder),
	// with their cluster ids; EffectiveWeight and Faded are left for the
	// caller, who knows the time and the decay settings. An unknown user
	// has none.
	Preferences(ctx context.Context, s Scope) ([]Preference, error)
	// PatchPreference edits one preference. Errors: ENOTFOUND, EINVALID.
	PatchPreference(ctx context.Context, s Scope, id string, p PreferencePatch) (*Preference, error)
	// DeletePreference forgets one preference. Errors: ENOTFOUND.
	DeletePreference(ctx context.Context, s Scope, id string) error
	// PreferenceVersion returns the user's version counters (zero for an
	// unknown user).
	PreferenceVersion(ctx context.Context, s Scope) (PreferenceVersion, error)
	// SavePreferenceClusters replaces the user's clusters with clusters
	// computed from version. Members that no longer exist are left out. If
	// the preferences changed since version, another clustering job is
	// enqueued; otherwise the pending one is done. Errors: EINVALID.
	SavePreferenceClusters(ctx context.Context, s Scope, version int64, clusters []PreferenceCluster) error
	// PreferenceClusters lists the user's clusters with their members
	// (concepts as stored now). Confidence and Strength are left for the
	// caller.
	PreferenceClusters(ctx context.Context, s Scope) ([]PreferenceCluster, error)
	// PreferenceSources lists the ids of the messages and events whose
	// evidence has been applied to the user's preferences.
	PreferenceSources(ctx context.Context, s Scope) ([]string, error)
	// RestorePreferences replaces the user's preferences and applied
	// sources with the given ones, keeping their ids (as an export or a
	// snapshot holds them), creating the user as needed and requesting
	// clustering. Errors: EINVALID.
	RestorePreferences(ctx context.Context, s Scope, prefs []Preference, sources []string) error
}
