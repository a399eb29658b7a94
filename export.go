package memento

import (
	"context"
	"encoding/json"
	"fmt"
)

// UserExporter is a store's part of the user export document.
type UserExporter interface {
	ExportUser(ctx context.Context, s Scope) (*UserExport, error)
}

// UserImporter stores a store's part of the document.
type UserImporter interface {
	ImportUser(ctx context.Context, s Scope, doc *UserExport) (*ImportResult, error)
}

// ExportUserDocument builds the one export document of a user, the same
// for the API, the CLI and snapshots: the store's part, then each section
// under its name. Errors: the store's (ENOTFOUND for an unknown user) and
// the sections'.
func ExportUserDocument(ctx context.Context, store UserExporter, sections []UserSection, s Scope) (*UserExport, error) {
	doc, err := store.ExportUser(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, sec := range sections {
		data, err := sec.ExportSection(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", sec.SectionName(), err)
		}
		if data == nil {
			continue // the component keeps nothing of this user
		}
		if doc.Sections == nil {
			doc.Sections = map[string]json.RawMessage{}
		}
		doc.Sections[sec.SectionName()] = data
	}
	return doc, nil
}

// ImportUserDocument stores a document ExportUserDocument produced: the
// store's part, then each section the document holds. The caller screens
// the document first (hygiene.ScreenExport with the sections' screeners),
// so that nothing is written from a document that is refused.
func ImportUserDocument(ctx context.Context, store UserImporter, sections []UserSection, s Scope, doc *UserExport) (*ImportResult, error) {
	res, err := store.ImportUser(ctx, s, doc)
	if err != nil {
		return nil, err
	}
	for _, sec := range sections {
		if data, ok := doc.Sections[sec.SectionName()]; ok {
			if err := sec.ImportSection(ctx, s, data); err != nil {
				return nil, fmt.Errorf("section %s: %w", sec.SectionName(), err)
			}
		}
	}
	return res, nil
}
