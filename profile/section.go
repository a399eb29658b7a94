package profile

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/memento-ai/memento"
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
	if err := sec.Store.RestoreProfile(ctx, s, &p); err != nil {
		return fmt.Errorf("import profile: %w", err)
	}
	return nil
}
