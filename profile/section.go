package profile

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// SectionName is the key of the profile in a user export and a snapshot.
const SectionName = "profile"

// Restorer keeps profiles and can put one back exactly as it was;
// *sqlite.DB is one.
type Restorer interface {
	Profile(ctx context.Context, s memento.Scope) (*memento.Profile, error)
	RestoreProfile(ctx context.Context, s memento.Scope, p *memento.Profile) error
}

// Section is the profile's section of a user export or snapshot (a
// memento.UserSection): the profile with every key's source, evidence and
// time, and its version, so a restored profile answers If-Match as the
// original did.
type Section struct {
	Store Restorer
}

var _ memento.UserSection = Section{}

// SectionName implements memento.UserSection.
func (Section) SectionName() string { return SectionName }

// ExportSection returns the user's profile as JSON, or nil when the user
// has none.
func (sec Section) ExportSection(ctx context.Context, s memento.Scope) (json.RawMessage, error) {
	p, err := sec.Store.Profile(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("export profile: %w", err)
	}
	if p.Version == 0 && len(p.Keys) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("export profile: %w", err)
	}
	return b, nil
}

// ImportSection restores a profile ExportSection produced, replacing the
// user's profile. Errors: EINVALID.
func (sec Section) ImportSection(ctx context.Context, s memento.Scope, data json.RawMessage) error {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	var p memento.Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return memento.Errorf(memento.EINVALID, "the profile section is not a profile: %v", err)
	}
	if p.Keys == nil {
		p.Keys = map[string]memento.ProfileEntry{}
	}
	// Profile values are rendered into prompts: a key that carries
	// instructions is refused here too, for callers that did not screen
	// the section first.
	if found := screenKeys(p.Keys); len(found) > 0 {
		return hygiene.Refuse("the profile section", found)
	}
	if err := sec.Store.RestoreProfile(ctx, s, &p); err != nil {
		return fmt.Errorf("import profile: %w", err)
	}
	return nil
}

var _ hygiene.SectionScreener = Section{}

// ScreenSection implements hygiene.SectionScreener: a key whose value (or
// name) holds text that carries instructions to the model is left out,
// since profile values are rendered into prompts. Errors: EINVALID.
func (Section) ScreenSection(data json.RawMessage) (json.RawMessage, []hygiene.Finding, error) {
	if len(data) == 0 || string(data) == "null" {
		return data, nil, nil
	}
	var p memento.Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, nil, memento.Errorf(memento.EINVALID, "the profile section is not a profile: %v", err)
	}
	found := screenKeys(p.Keys)
	if len(found) == 0 {
		return data, nil, nil
	}
	out, err := json.Marshal(p)
	if err != nil {
		return nil, nil, fmt.Errorf("screen profile: %w", err)
	}
	return out, found, nil
}

// screenKeys removes from keys those whose name or value fails the gate
// and returns a finding for each.
func screenKeys(keys map[string]memento.ProfileEntry) []hygiene.Finding {
	var found []hygiene.Finding
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		f := hygiene.JSONStrings("keys."+k+".value", keys[k].Value)
		if reasons := hygiene.CheckStored(k); len(reasons) > 0 {
			f = append(f, hygiene.Finding{Item: "keys." + k, Reason: strings.Join(reasons, "; ")})
		}
		if len(f) > 0 {
			found = append(found, f...)
			delete(keys, k)
		}
	}
	return found
}
