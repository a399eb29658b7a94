package prefs

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// SectionName is the key of the preferences in a user export and a
// snapshot.
const SectionName = "preferences"

// Section is the preference memory's section of a user export or snapshot
// (a memento.UserSection): every preference with its vector and embedder,
// and the ids of the messages and events already applied, so a restored
// user is neither missing a memory nor given one twice, and the clusters
// with their descriptions and stances, so a restored user's context reads
// as before without asking the model to describe them again.
type Section struct {
	Store memento.PreferenceService
}

var _ memento.UserSection = Section{}

// sectionDoc is the JSON of the section.
type sectionDoc struct {
	Preferences []sectionPreference `json:"preferences"`
	Sources     []string            `json:"sources"`
	// Clusters are absent from documents written before they were kept;
	// restoring such a document leaves the clustering to the job it
	// requests.
	Clusters []sectionCluster `json:"clusters,omitempty"`
}

// sectionCluster is a cluster as exported: its listed fields and the
// signature that lets a later clustering keep its description.
type sectionCluster struct {
	memento.PreferenceCluster
	Signature string `json:"signature"`
}

// sectionPreference is a preference as exported: its listed fields, and
// its vector (little-endian float32, base64) with the embedder's id.
type sectionPreference struct {
	memento.Preference
	Embedder string `json:"embedder"`
	Vector   []byte `json:"vector"`
}

// SectionName implements memento.UserSection.
func (Section) SectionName() string { return SectionName }

// ExportSection returns the user's preferences as JSON, or nil when the
// user has none.
func (sec Section) ExportSection(ctx context.Context, s memento.Scope) (json.RawMessage, error) {
	ps, err := sec.Store.Preferences(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("export preferences: %w", err)
	}
	sources, err := sec.Store.PreferenceSources(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("export preferences: %w", err)
	}
	if len(ps) == 0 && len(sources) == 0 {
		return nil, nil
	}
	clusters, err := sec.Store.PreferenceClusters(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("export preference clusters: %w", err)
	}
	doc := sectionDoc{Preferences: make([]sectionPreference, len(ps)), Sources: sources}
	for _, c := range clusters {
		doc.Clusters = append(doc.Clusters, sectionCluster{PreferenceCluster: c, Signature: c.Signature})
	}
	for i, p := range ps {
		b := make([]byte, 4*len(p.Vector))
		for d, x := range p.Vector {
			binary.LittleEndian.PutUint32(b[4*d:], math.Float32bits(x))
		}
		p.Cluster = nil
		doc.Preferences[i] = sectionPreference{Preference: p, Embedder: p.Embedder, Vector: b}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("export preferences: %w", err)
	}
	return out, nil
}

// ImportSection replaces the user's preferences with those of a section
// ExportSection produced. Errors: EINVALID.
func (sec Section) ImportSection(ctx context.Context, s memento.Scope, data json.RawMessage) error {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	var doc sectionDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return memento.Errorf(memento.EINVALID, "the preferences section is not valid: %v", err)
	}
	ps := make([]memento.Preference, len(doc.Preferences))
	for i, sp := range doc.Preferences {
		if len(sp.Vector)%4 != 0 {
			return memento.Errorf(memento.EINVALID, "preferences[%d].vector is not a list of float32 values", i)
		}
		p := sp.Preference
		// A concept is rendered into prompts as it is: one that carries
		// instructions is refused here too, for callers that did not
		// screen the section first.
		if reasons := hygiene.CheckStored(p.Concept); len(reasons) > 0 {
			return memento.Errorf(memento.EINVALID, "preferences[%d].concept carries instructions to the model (%s)", i, strings.Join(reasons, "; "))
		}
		p.Embedder, p.Vector = sp.Embedder, make([]float32, len(sp.Vector)/4)
		for d := range p.Vector {
			p.Vector[d] = math.Float32frombits(binary.LittleEndian.Uint32(sp.Vector[4*d:]))
		}
		p.Cluster, p.EffectiveWeight, p.Faded = nil, 0, false
		ps[i] = p
	}
	if err := sec.Store.RestorePreferences(ctx, s, ps, doc.Sources); err != nil {
		return fmt.Errorf("import preferences: %w", err)
	}
	return sec.restoreClusters(ctx, s, doc.Clusters)
}

// restoreClusters stores the exported clusters as computed from the
// preferences just restored, which settles the clustering job the restore
// requested. A document without clusters, or with a description that
// carries instructions (descriptions are rendered into prompts), leaves
// the clustering to that job.
func (sec Section) restoreClusters(ctx context.Context, s memento.Scope, exported []sectionCluster) error {
	if len(exported) == 0 {
		return nil
	}
	clusters := make([]memento.PreferenceCluster, len(exported))
	for i, c := range exported {
		if len(hygiene.CheckStored(c.Description)) > 0 {
			return nil
		}
		for _, m := range c.Members {
			if m.Stance != memento.StanceSupport && m.Stance != memento.StanceOppose {
				return memento.Errorf(memento.EINVALID, "clusters[%d] member %s has stance %q, want support or oppose", i, m.Preference, m.Stance)
			}
		}
		clusters[i] = c.PreferenceCluster
		clusters[i].Signature = c.Signature
	}
	ver, err := sec.Store.PreferenceVersion(ctx, s)
	if err != nil {
		return fmt.Errorf("import preference clusters: %w", err)
	}
	for i := range clusters {
		clusters[i].Version = ver.Version
	}
	if err := sec.Store.SavePreferenceClusters(ctx, s, ver.Version, clusters); err != nil {
		return fmt.Errorf("import preference clusters: %w", err)
	}
	return nil
}

var _ hygiene.SectionScreener = Section{}

// ScreenSection implements hygiene.SectionScreener: a preference whose
// concept carries instructions to the model is left out (a concept is
// rendered into prompts as it is). Errors: EINVALID.
func (Section) ScreenSection(data json.RawMessage) (json.RawMessage, []hygiene.Finding, error) {
	if len(data) == 0 || string(data) == "null" {
		return data, nil, nil
	}
	var doc struct {
		Preferences []json.RawMessage `json:"preferences"`
		Sources     []string          `json:"sources"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, memento.Errorf(memento.EINVALID, "the preferences section is not valid: %v", err)
	}
	var found []hygiene.Finding
	kept := doc.Preferences[:0]
	for i, raw := range doc.Preferences {
		var p struct {
			ID      string `json:"id"`
			Concept string `json:"concept"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, nil, memento.Errorf(memento.EINVALID, "preferences[%d] is not a preference: %v", i, err)
		}
		if reasons := hygiene.CheckStored(p.Concept); len(reasons) > 0 {
			found = append(found, hygiene.Finding{Item: fmt.Sprintf("preferences[%d].concept (%s)", i, p.ID), Reason: strings.Join(reasons, "; ")})
			continue
		}
		kept = append(kept, raw)
	}
	if len(found) == 0 {
		return data, nil, nil
	}
	doc.Preferences = kept
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("screen preferences: %w", err)
	}
	return out, found, nil
}
