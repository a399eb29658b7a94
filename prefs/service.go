package prefs

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
	"github.com/memento-ai/memento/internal/lru"
)

// Model is what the preference memory asks of a language model.
type Model interface {
	memento.PreferenceExtractor
	memento.ClusterDescriber
}

// Service is the preference memory: it learns preferences from messages
// and events (as background jobs), clusters them, and lists and edits them
// for the API. Set its fields, then use it; it is safe for concurrent use.
type Service struct {
	Store memento.PreferenceService
	// Messages is read by the message job for the message's text.
	Messages memento.MessageLog
	Model    Model
	// Embedder embeds concepts; memories of other embedders are listed but
	// never compared with its vectors.
	Embedder memento.Embedder
	// Catalog resolves the titles of events.
	Catalog memento.Catalog
	Config  Config
	Clock   memento.Clock
	Logger  *slog.Logger

	// ClusterCache bounds the preferences the service holds between
	// clusterings of their users, with their vectors and neighbours
	// (default DefaultClusterCache); past it, the users clustered least
	// recently are dropped and read in full at their next clustering.
	// Held preferences are used only when Store implements
	// PreferencesSince.
	ClusterCache int
	// ClusterFullEvery and ClusterFullAfter bound the incremental
	// clusterings of a user: after ClusterFullEvery of them (default
	// DefaultClusterFullEvery) or ClusterFullAfter (default
	// DefaultClusterFullAfter) the next reads every preference again
	// and checks what was held (ClusterStats' Mismatches).
	ClusterFullEvery int
	ClusterFullAfter time.Duration

	// held holds the users' clusterStates, weighed by their preferences;
	// the counts are ClusterStats'.
	held                        lru.Cache[*clusterState]
	fullReads, incrementalReads atomic.Int64
	mismatches                  atomic.Int64
}

// eventSourcePrefix marks event ids among a memory's sources, so that a
// message and an event with the same client id stay distinct sources.
const eventSourcePrefix = "event:"

func (sv *Service) now() time.Time {
	if sv.Clock == nil {
		return time.Now().UTC()
	}
	return sv.Clock.Now().UTC()
}

func (sv *Service) logger() *slog.Logger {
	if sv.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return sv.Logger
}

// Register makes q run the preference jobs: JobPreferences (one user
// message), JobPreferencesFromEvents (one event) and JobPreferenceClusters
// (one user's clusters).
func (sv *Service) Register(q memento.Queue, opts memento.JobOptions) {
	q.Handle(memento.JobPreferences, sv.HandleMessage, opts)
	q.Handle(memento.JobPreferencesFromEvents, sv.HandleEvent, opts)
	q.Handle(memento.JobPreferenceClusters, sv.HandleClusters, opts)
}

// Learn embeds concepts (each concept alone) and applies them to the user's
// preferences as the evidence of source, stated at at. A source already
// applied changes nothing.
func (sv *Service) Learn(ctx context.Context, s memento.Scope, source string, at time.Time, concepts []memento.Concept) (*memento.PreferenceWriteResult, error) {
	ws, err := sv.writes(ctx, []evidence{{source: source, at: at, concepts: concepts}})
	if err != nil {
		return nil, err
	}
	return sv.Store.WritePreferences(ctx, s, ws[0])
}

// evidence is what one source says of a user's tastes.
type evidence struct {
	source   string
	at       time.Time
	concepts []memento.Concept
}

// writes turns evidence into preference writes: every concept that
// carries no instructions, embedded alone (all of them in one call).
func (sv *Service) writes(ctx context.Context, evs []evidence) ([]memento.PreferenceWrite, error) {
	var texts []string
	kept := make([][]memento.Concept, len(evs))
	for i, e := range evs {
		// A concept is rendered into prompts as it is; one that carries
		// instructions (a model may echo an order as a taste) is dropped.
		for _, c := range e.concepts {
			if len(hygiene.CheckStored(c.Concept)) == 0 {
				kept[i] = append(kept[i], c)
				texts = append(texts, strings.TrimSpace(c.Concept))
			}
		}
	}
	var vectors [][]float32
	if len(texts) > 0 {
		var err error
		if vectors, err = sv.Embedder.Embed(ctx, texts); err != nil {
			return nil, fmt.Errorf("embed concepts: %w", err)
		}
		if len(vectors) != len(texts) {
			return nil, fmt.Errorf("embed concepts: %d vectors for %d concepts", len(vectors), len(texts))
		}
	}
	embedder := sv.Embedder.ID()
	cfg := sv.Config
	ws := make([]memento.PreferenceWrite, len(evs))
	for i, e := range evs {
		at := e.at
		if at.IsZero() {
			at = sv.now()
		}
		n := len(kept[i])
		evidence := EvidenceOf(kept[i], vectors[:n:n], at.UTC())
		vectors = vectors[n:]
		source := e.source
		ws[i] = memento.PreferenceWrite{
			Source:   source,
			Embedder: embedder,
			Merge: func(current []memento.Preference) (memento.PreferenceChanges, error) {
				return cfg.Merge(current, source, embedder, evidence), nil
			},
		}
	}
	return ws, nil
}

// MessageInput is a user's message to learn from, with the text of the
// user's message before it in its thread ("" when there is none), which
// the hygiene gate reads it with.
type MessageInput struct {
	Message  memento.Message
	Previous string
}

// LearnMessages does the preference jobs of a batch of a user's messages
// (the user's backlog, memento.JobRequest.ByUser): it extracts the likes
// and dislikes of each as LearnMessage does, embeds them in one call and
// applies them in order in one write. It returns one error per message:
// a message whose extraction failed gets its error, and an error of the
// embedding or the write goes to every message it carried. A user
// forgotten meanwhile learns nothing, and that is no error.
func (sv *Service) LearnMessages(ctx context.Context, s memento.Scope, msgs []MessageInput) []error {
	errs := make([]error, len(msgs))
	var evs []evidence
	var carried []int
	for i, in := range msgs {
		m := in.Message
		if m.Role != memento.RoleUser {
			continue
		}
		if reasons := hygiene.CheckFollowing(in.Previous, m.Text); len(reasons) > 0 {
			sv.logger().InfoContext(ctx, "no preferences learned: the message instructs the system", "user", s.User, "message", m.ID, "reasons", strings.Join(reasons, "; "))
			continue
		}
		concepts, err := sv.Model.ExtractPreferences(ctx, m.Text)
		if err != nil {
			errs[i] = fmt.Errorf("extract preferences of message %s: %w", m.ID, err)
			continue
		}
		evs = append(evs, evidence{source: m.ID, at: m.At, concepts: concepts})
		carried = append(carried, i)
	}
	if len(evs) == 0 {
		return errs
	}
	ws, err := sv.writes(ctx, evs)
	if err == nil {
		_, err = sv.Store.WritePreferenceBatch(ctx, s, ws)
	}
	if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		for _, i := range carried {
			errs[i] = fmt.Errorf("preferences of message %s: %w", msgs[i].Message.ID, err)
		}
	}
	return errs
}

// LearnMessage extracts the likes and dislikes of a user message and
// learns them, with the message as their source. A message that carries
// instructions to the model teaches nothing: the preference job runs
// beside the pipeline rather than after it, so it applies the same gate
// itself instead of waiting for the pipeline's verdict.
func (sv *Service) LearnMessage(ctx context.Context, s memento.Scope, m memento.Message) (*memento.PreferenceWriteResult, error) {
	return sv.learnMessage(ctx, s, m, "")
}

// learnMessage is LearnMessage with the text of the user's previous
// message in the thread, so an instruction split across the two is
// refused too.
func (sv *Service) learnMessage(ctx context.Context, s memento.Scope, m memento.Message, previous string) (*memento.PreferenceWriteResult, error) {
	if m.Role != memento.RoleUser {
		return &memento.PreferenceWriteResult{}, nil
	}
	if reasons := hygiene.CheckFollowing(previous, m.Text); len(reasons) > 0 {
		sv.logger().InfoContext(ctx, "no preferences learned: the message instructs the system", "user", s.User, "message", m.ID, "reasons", strings.Join(reasons, "; "))
		return &memento.PreferenceWriteResult{}, nil
	}
	concepts, err := sv.Model.ExtractPreferences(ctx, m.Text)
	if err != nil {
		return nil, fmt.Errorf("extract preferences of message %s: %w", m.ID, err)
	}
	return sv.Learn(ctx, s, m.ID, m.At, concepts)
}

// LearnEvent learns the genres, people and plot of the event's title, with
// the event as their source. An event about a title the catalog does not
// have teaches nothing.
func (sv *Service) LearnEvent(ctx context.Context, s memento.Scope, e memento.Event) (*memento.PreferenceWriteResult, error) {
	if EventStrength(e) == 0 {
		return &memento.PreferenceWriteResult{}, nil
	}
	t, err := sv.Catalog.Title(ctx, e.TitleID)
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		sv.logger().WarnContext(ctx, "event names a title the catalog does not have; no preferences learned", "user", s.User, "event", e.ID, "title", e.TitleID)
		return &memento.PreferenceWriteResult{}, nil
	} else if err != nil {
		return nil, fmt.Errorf("look up title %s of event %s: %w", e.TitleID, e.ID, err)
	}
	return sv.Learn(ctx, s, eventSourcePrefix+e.ID, e.At, FromEvent(e, *t))
}

// HandleMessage is the memento.JobHandler of JobPreferences. A message
// that no longer exists (its user was forgotten) is done with.
func (sv *Service) HandleMessage(ctx context.Context, _ string, payload json.RawMessage) error {
	var job memento.MessageJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("preferences: bad payload: %w", err)
	}
	s := memento.Scope{Tenant: job.Tenant, User: job.User}
	m, err := sv.message(ctx, s, job)
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return nil
	} else if err != nil {
		return fmt.Errorf("preferences of message %s: %w", job.Message, err)
	}
	if _, err := sv.learnMessage(ctx, s, *m, sv.previousUserText(ctx, s, job)); err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		return fmt.Errorf("preferences of message %s: %w", job.Message, err)
	}
	return nil
}

// message reads the job's message: by its sequence number when the job has
// one, else by scanning its thread.
func (sv *Service) message(ctx context.Context, s memento.Scope, job memento.MessageJob) (*memento.Message, error) {
	after, limit := int64(0), 0
	if job.Seq > 0 {
		after, limit = job.Seq-1, 1
	}
	msgs, err := sv.Messages.Messages(ctx, s, job.Thread, after, limit)
	if err != nil {
		return nil, err
	}
	for i := range msgs {
		if msgs[i].ID == job.Message {
			return &msgs[i], nil
		}
	}
	return nil, memento.Errorf(memento.ENOTFOUND, "message %q not found in thread %q", job.Message, job.Thread)
}

// previousLookback is how many messages before the job's the message job
// reads to find the user's previous one.
const previousLookback = 4

// previousUserText returns the text of the user's message before the
// job's in its thread, or "" when there is none or it cannot be read (the
// message is then checked alone).
func (sv *Service) previousUserText(ctx context.Context, s memento.Scope, job memento.MessageJob) string {
	if job.Seq <= 1 || sv.Messages == nil {
		return ""
	}
	after := max(0, job.Seq-1-previousLookback)
	msgs, err := sv.Messages.Messages(ctx, s, job.Thread, after, int(job.Seq-1-after))
	if err != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Seq < job.Seq && msgs[i].Role == memento.RoleUser {
			return msgs[i].Text
		}
	}
	return ""
}

// HandleEvent is the memento.JobHandler of JobPreferencesFromEvents.
func (sv *Service) HandleEvent(ctx context.Context, _ string, payload json.RawMessage) error {
	var job memento.PreferenceEventJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("preferences from event: bad payload: %w", err)
	}
	s := memento.Scope{Tenant: job.Tenant, User: job.User}
	if _, err := sv.LearnEvent(ctx, s, job.Event); err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		return fmt.Errorf("preferences from event %s: %w", job.Event.ID, err)
	}
	return nil
}

// HandleClusters is the memento.JobHandler of JobPreferenceClusters.
func (sv *Service) HandleClusters(ctx context.Context, _ string, payload json.RawMessage) error {
	var job memento.PreferenceClusterJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("preference clusters: bad payload: %w", err)
	}
	err := sv.Recluster(ctx, memento.Scope{Tenant: job.Tenant, User: job.User})
	if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		return err
	}
	return nil
}

// decorate fills a memory's effective weight and faded flag at now, and
// rounds its weights for people to read.
func (sv *Service) decorate(p *memento.Preference, now time.Time) {
	p.EffectiveWeight = sv.Config.Decay.Effective(p.Weight, p.Kind, p.LastSeen, now)
	p.Faded = sv.Config.Decay.Faded(p.EffectiveWeight, p.Weight)
	p.Weight = round4(p.Weight)
	p.EffectiveWeight = round4(p.EffectiveWeight)
	if p.Sources == nil {
		p.Sources = []string{}
	}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Preferences lists a user's preferences with their effective weights now,
// strongest first (faded ones included, flagged).
func (sv *Service) Preferences(ctx context.Context, s memento.Scope) ([]memento.Preference, error) {
	all, err := sv.Store.Preferences(ctx, s)
	if err != nil {
		return nil, err
	}
	now := sv.now()
	for i := range all {
		sv.decorate(&all[i], now)
	}
	slices.SortStableFunc(all, func(a, b memento.Preference) int {
		return cmp.Or(cmp.Compare(math.Abs(b.EffectiveWeight), math.Abs(a.EffectiveWeight)), strings.Compare(a.Concept, b.Concept))
	})
	return all, nil
}

// Live returns the user's preferences that can be used now: those of the
// service's embedder that have not faded, with their effective weights.
func (sv *Service) Live(ctx context.Context, s memento.Scope) ([]memento.Preference, error) {
	return sv.liveAt(ctx, s, sv.now())
}

// liveAt is Live at the given time.
func (sv *Service) liveAt(ctx context.Context, s memento.Scope, now time.Time) ([]memento.Preference, error) {
	all, err := sv.Store.Preferences(ctx, s)
	if err != nil {
		return nil, err
	}
	id := sv.Embedder.ID()
	live := all[:0]
	for _, p := range all {
		w, ok := sv.effective(&p, id, now)
		if !ok {
			continue
		}
		p.EffectiveWeight = w
		live = append(live, p)
	}
	return live, nil
}

// effective returns p's effective weight at now, and whether p is live
// then: of the embedder id and not faded.
func (sv *Service) effective(p *memento.Preference, id string, now time.Time) (float64, bool) {
	if p.Embedder != id {
		return 0, false
	}
	w := sv.Config.Decay.Effective(p.Weight, p.Kind, p.LastSeen, now)
	return w, !sv.Config.Decay.Faded(w, p.Weight)
}

// Clusters lists a user's clusters with their confidence and strength now,
// most confident first.
func (sv *Service) Clusters(ctx context.Context, s memento.Scope) ([]memento.PreferenceCluster, error) {
	return sv.clustersAt(ctx, s, sv.now())
}

// clustersAt is Clusters at the given time.
func (sv *Service) clustersAt(ctx context.Context, s memento.Scope, now time.Time) ([]memento.PreferenceCluster, error) {
	clusters, err := sv.Store.PreferenceClusters(ctx, s)
	if err != nil {
		return nil, err
	}
	if len(clusters) == 0 {
		return clusters, nil
	}
	all, err := sv.Store.Preferences(ctx, s)
	if err != nil {
		return nil, err
	}
	return sv.clustersOf(clusters, all, now), nil
}

// clustersOf sets each cluster's confidence and strength at now, from the
// user's preferences all (read, never written), and sorts them most
// confident first.
func (sv *Service) clustersOf(clusters []memento.PreferenceCluster, all []memento.Preference, now time.Time) []memento.PreferenceCluster {
	if len(clusters) == 0 {
		return clusters
	}
	byID := make(map[string]memento.Preference, len(all))
	weights := make(map[string]float64, len(all))
	for _, p := range all {
		p.EffectiveWeight = sv.Config.Decay.Effective(p.Weight, p.Kind, p.LastSeen, now)
		byID[p.ID] = p
		weights[p.ID] = p.EffectiveWeight
	}
	for i := range clusters {
		c := &clusters[i]
		members := make([]memento.Preference, 0, len(c.Members))
		for _, m := range c.Members {
			if p, ok := byID[m.Preference]; ok {
				members = append(members, p)
			}
		}
		c.Confidence = Confidence(members)
		c.Strength = Strength(*c, weights)
	}
	slices.SortStableFunc(clusters, func(a, b memento.PreferenceCluster) int {
		return cmp.Or(cmp.Compare(b.Confidence, a.Confidence), strings.Compare(a.ID, b.ID))
	})
	return clusters
}

// Recluster groups the user's live preferences with DBSCAN, describes each
// group (reusing the description of a group whose members and signs have
// not changed) and stores the clusters. It runs as the debounced
// JobPreferenceClusters job; the store enqueues another when preferences
// changed while it ran. Over a store with PreferencesSince it groups what
// it holds of the user, brought up to date with the preferences changed
// since (catchUp).
func (sv *Service) Recluster(ctx context.Context, s memento.Scope) error {
	var e *lru.Entry[*clusterState]
	if _, ok := sv.Store.(PreferencesSince); ok {
		e = sv.stateFor(s)
		e.Value.mu.Lock()
		defer e.Value.mu.Unlock()
	}
	groups, described, version, err := sv.regroup(ctx, s, e)
	if err != nil {
		return fmt.Errorf("recluster %s: %w", s.User, err)
	}
	var clusters []memento.PreferenceCluster
	for _, members := range groups {
		c := memento.PreferenceCluster{ID: ClusterID(members), Signature: Signature(members), Version: version}
		if prev, ok := described[c.Signature]; ok && len(prev.Members) == len(members) {
			c.Description, c.Members = prev.Description, prev.Members
			clusters = append(clusters, c)
			continue
		}
		desc, err := sv.describe(ctx, members)
		if err != nil {
			return fmt.Errorf("recluster %s: %w", s.User, err)
		}
		c.Description = desc.Description
		for i, m := range members {
			c.Members = append(c.Members, memento.PreferenceClusterMember{Preference: m.ID, Concept: m.Concept, Stance: desc.Stances[i]})
		}
		clusters = append(clusters, c)
	}
	if err := sv.Store.SavePreferenceClusters(ctx, s, version, clusters); err != nil {
		return fmt.Errorf("recluster %s: %w", s.User, err)
	}
	return nil
}

// regroup groups the user's live preferences, each group's members by
// weight, and returns the groups, the clusters stored before by
// signature and the preference version they were grouped at. Without a
// state it reads the version, every preference with its vector and the
// stored clusters, and groups them from scratch; with one (locked) it
// reads the preferences changed since what it holds and groups from its
// neighbour lists. The stored clusters are read either way: another
// process may have described them since (descriptions are kept by
// signature, and the members' order with them).
// Grouping is compute, so it runs on one of the background's processors
// (memento.Compute); the model's descriptions and the save after it,
// waits, do not.
func (sv *Service) regroup(ctx context.Context, s memento.Scope, e *lru.Entry[*clusterState]) ([][]memento.Preference, map[string]memento.PreferenceCluster, int64, error) {
	var st *clusterState
	if e != nil {
		st = e.Value
	}
	var version int64
	if st == nil {
		// The version first: a change committed before the rows are read
		// is clustered again under a newer version, never lost.
		ver, err := sv.Store.PreferenceVersion(ctx, s)
		if err != nil {
			return nil, nil, 0, err
		}
		version = ver.Version
	}
	held, release, err := memento.Compute(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	defer release()
	now := sv.now()
	var live []memento.Preference
	var idx [][]int
	if st == nil {
		if live, err = sv.liveAt(held, s, now); err != nil {
			return nil, nil, 0, err
		}
		idx = sv.Config.Group(live)
	} else {
		if version, err = sv.catchUp(held, s, e, sv.Store.(PreferencesSince), now); err != nil {
			return nil, nil, 0, err
		}
		live, idx = sv.group(st, now)
	}
	old, err := sv.Store.PreferenceClusters(held, s)
	if err != nil {
		return nil, nil, 0, err
	}
	described := make(map[string]memento.PreferenceCluster, len(old))
	for _, c := range old {
		if c.Signature != "" {
			described[c.Signature] = c
		}
	}
	var groups [][]memento.Preference
	for _, group := range idx {
		members := make([]memento.Preference, len(group))
		for i, j := range group {
			members[i] = live[j]
		}
		slices.SortStableFunc(members, func(a, b memento.Preference) int {
			return cmp.Or(cmp.Compare(math.Abs(b.EffectiveWeight), math.Abs(a.EffectiveWeight)), strings.Compare(a.Concept, b.Concept))
		})
		groups = append(groups, members)
	}
	return groups, described, version, nil
}

// describe asks the model for a cluster's direction, and repairs an answer
// that lacks a description or a valid stance per member.
func (sv *Service) describe(ctx context.Context, members []memento.Preference) (*memento.ClusterDescription, error) {
	in := make([]memento.ClusterMember, len(members))
	for i, m := range members {
		in[i] = memento.ClusterMember{Concept: m.Concept, Weight: round4(m.EffectiveWeight)}
	}
	d, err := sv.Model.DescribeCluster(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	out := &memento.ClusterDescription{Description: strings.TrimSpace(d.Description), Stances: signStances(members)}
	if len(d.Stances) == len(members) {
		valid := true
		for _, st := range d.Stances {
			valid = valid && (st == memento.StanceSupport || st == memento.StanceOppose)
		}
		if valid {
			out.Stances = d.Stances
		}
	}
	if out.Description == "" || len(hygiene.CheckStored(out.Description)) > 0 {
		// Descriptions are rendered into prompts: one that carries
		// instructions is replaced by the plain one.
		out.Description = describeBySign(members)
	}
	return out, nil
}

// Patch edits a preference: a new concept is embedded again, a new weight
// (within ±MaxWeight) restarts its age. Errors: EINVALID, ENOTFOUND.
func (sv *Service) Patch(ctx context.Context, s memento.Scope, id string, concept *string, weight *float64) (*memento.Preference, error) {
	cfg := sv.Config.withDefaults()
	patch := memento.PreferencePatch{Weight: weight, At: sv.now()}
	if weight != nil && (math.IsNaN(*weight) || math.Abs(*weight) > cfg.MaxWeight) {
		return nil, memento.Errorf(memento.EINVALID, "weight must be from %g to %g, got %v", -cfg.MaxWeight, cfg.MaxWeight, *weight)
	}
	if concept != nil {
		c := strings.Join(strings.Fields(*concept), " ")
		if c == "" {
			return nil, memento.Errorf(memento.EINVALID, "concept must not be empty")
		}
		if reasons := hygiene.CheckStored(c); len(reasons) > 0 {
			return nil, memento.Errorf(memento.EINVALID, "concept carries instructions to the model (%s)", strings.Join(reasons, "; "))
		}
		vs, err := sv.Embedder.Embed(ctx, []string{c})
		if err != nil {
			return nil, fmt.Errorf("embed concept: %w", err)
		}
		patch.Concept, patch.Vector, patch.Embedder = &c, vs[0], sv.Embedder.ID()
	}
	p, err := sv.Store.PatchPreference(ctx, s, id, patch)
	if err != nil {
		return nil, err
	}
	sv.decorate(p, sv.now())
	return p, nil
}

// Delete forgets a preference. Errors: ENOTFOUND.
func (sv *Service) Delete(ctx context.Context, s memento.Scope, id string) error {
	return sv.Store.DeletePreference(ctx, s, id)
}
