package prefs

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/memento-ai/memento"
)

// SectionName is the key of the preferences in a user export and a
// snapshot.
const SectionName = "preferences"

// Section is the preference memory's section of a user export or snapshot
// (a memento.UserSection): every preference with its vector and embedder,
// and the ids of the messages and events already applied, so a restored
// user is neither missing a memory nor given one twice. Clusters are not
// kept: restoring requests a clustering job, which describes them again.
type Section struct {
	Store memento.PreferenceService
}

var _ memento.UserSection = Section{}

// sectionDoc is the JSON of the section.
type sectionDoc struct {
	Preferences []sectionPreference `json:"preferences"`
	Sources     []string            `json:"sources"`
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
	doc := sectionDoc{Preferences: make([]sectionPreference, len(ps)), Sources: sources}
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
	return nil
}
