package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/memento-ai/memento"
)

// Users is the local store a snapshot is taken from and restored into;
// *sqlite.DB is one.
type Users interface {
	// ExportUser reads the user's threads, messages, summaries, events and
	// memories. Errors: ENOTFOUND.
	ExportUser(ctx context.Context, s memento.Scope) (*memento.UserExport, error)
	// ImportUser stores a document under the user.
	ImportUser(ctx context.Context, s memento.Scope, doc *memento.UserExport) (*memento.ImportResult, error)
	UserExists(ctx context.Context, s memento.Scope) (bool, error)
	Users(ctx context.Context, tenant string) ([]string, error)
	DeleteUser(ctx context.Context, s memento.Scope) error
}

// Snapshots copies users' state between the local store and a snapshot
// store. A user's document is the user export (memento.UserExport: threads
// with their active contexts, messages and summaries, events, memories)
// with one entry in Sections per section (the profile, preferences, ...),
// written as one JSON object under UserKey. Learned models (the profile's
// co-occurrence model) are objects of their own under ModelKey.
type Snapshots struct {
	Store Store
	Local Users
	// Sections add the data of other components to each document, by
	// their SectionName.
	Sections []memento.UserSection
	// Models, when set, lets PushModel and PullModel copy learned models;
	// CheckModel, when set, validates a model before it is restored.
	Models     memento.ProfileModelService
	CheckModel func(name string, data []byte) error
	// AfterRestore, when set, runs after a user was restored, such as a
	// backfill of embeddings the document leaves out.
	AfterRestore func(ctx context.Context, s memento.Scope) error
	Logger       *slog.Logger
}

func (x *Snapshots) logger() *slog.Logger {
	if x.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return x.Logger
}

// Document builds the user's snapshot document. Errors: ENOTFOUND for a
// user the local store does not know.
func (x *Snapshots) Document(ctx context.Context, s memento.Scope) (*memento.UserExport, error) {
	return memento.ExportUserDocument(ctx, x.Local, x.Sections, s)
}

// Push writes the user's document to the snapshot store. It returns the
// document's size. Errors: ENOTFOUND for a user the local store does not
// know, EUNAVAILABLE when the snapshot store fails.
func (x *Snapshots) Push(ctx context.Context, s memento.Scope) (int, error) {
	doc, err := x.Document(ctx, s)
	if err != nil {
		return 0, fmt.Errorf("push %s: %w", s.User, err)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return 0, fmt.Errorf("push %s: encode: %w", s.User, err)
	}
	if err := x.Store.Put(ctx, UserKey(s), data); err != nil {
		return 0, fmt.Errorf("push %s: %w", s.User, err)
	}
	return len(data), nil
}

// Pull restores the user from the snapshot store into the local store and
// reports whether there was a document. A user the local store knows is
// left alone (false, ECONFLICT) unless replace, which deletes the local
// user first. A restore that fails halfway deletes what it stored, so the
// next attempt starts clean. Errors: ECONFLICT, EINVALID for a document
// this version cannot read, EUNAVAILABLE.
func (x *Snapshots) Pull(ctx context.Context, s memento.Scope, replace bool) (bool, error) {
	data, err := x.Store.Get(ctx, UserKey(s))
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("pull %s: %w", s.User, err)
	}
	var doc memento.UserExport
	if err := json.Unmarshal(data, &doc); err != nil {
		return false, memento.WrapError(memento.EINVALID, err, "the snapshot of %s in %s is not a user document: %v", s.User, x.Store, err)
	}
	if err := doc.CheckFormat(); err != nil {
		return false, fmt.Errorf("pull %s: %w", s.User, err)
	}
	if err := x.screen(ctx, s, &doc); err != nil {
		return false, fmt.Errorf("pull %s: %w", s.User, err)
	}
	exists, err := x.Local.UserExists(ctx, s)
	if err != nil {
		return false, fmt.Errorf("pull %s: %w", s.User, err)
	}
	if exists {
		if !replace {
			return false, memento.Errorf(memento.ECONFLICT, "user %q exists in the local store; pull with --replace to overwrite it", s.User)
		}
		if err := x.Local.DeleteUser(ctx, s); err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
			return false, fmt.Errorf("pull %s: %w", s.User, err)
		}
	}
	if err := x.restore(ctx, s, &doc); err != nil {
		if derr := x.Local.DeleteUser(context.WithoutCancel(ctx), s); derr != nil && memento.ErrorCode(derr) != memento.ENOTFOUND {
			err = errors.Join(err, fmt.Errorf("roll back: %w", derr))
		}
		return false, fmt.Errorf("pull %s: %w", s.User, err)
	}
	if x.AfterRestore != nil {
		if err := x.AfterRestore(ctx, s); err != nil {
			x.logger().WarnContext(ctx, "after restoring a user", "user", s.User, "err", err)
		}
	}
	return true, nil
}

// restore stores a document and its sections.
func (x *Snapshots) restore(ctx context.Context, s memento.Scope, doc *memento.UserExport) error {
	if _, err := memento.ImportUserDocument(ctx, x.Local, x.Sections, s, doc); err != nil {
		return err
	}
	known := map[string]bool{}
	for _, sec := range x.Sections {
		known[sec.SectionName()] = true
	}
	for name := range doc.Sections {
		if !known[name] {
			x.logger().WarnContext(ctx, "snapshot section not restored: this process does not know it", "user", s.User, "section", name)
		}
	}
	return nil
}

// RemoteUsers lists the users of a tenant the snapshot store has.
func (x *Snapshots) RemoteUsers(ctx context.Context, tenant string) ([]string, error) {
	keys, err := x.Store.List(ctx, UsersPrefix(tenant))
	if err != nil {
		return nil, err
	}
	var users []string
	for _, k := range keys {
		if u, ok := UserFromKey(k); ok {
			users = append(users, u)
		}
	}
	slices.Sort(users)
	return users, nil
}

// PushModel writes the tenant's named model, if there is one, and returns
// its version (0: none).
func (x *Snapshots) PushModel(ctx context.Context, tenant, name string) (int64, error) {
	if x.Models == nil {
		return 0, nil
	}
	m, err := x.Models.ProfileModel(ctx, tenant, name)
	if err != nil || m == nil {
		return 0, err
	}
	if err := x.Store.Put(ctx, ModelKey(tenant, name), m.Data); err != nil {
		return 0, fmt.Errorf("push model %s/%s: %w", tenant, name, err)
	}
	return m.Version, nil
}

// PullModel restores the tenant's named model from the snapshot store,
// marked as restored (see profile.RestoredMark), and reports whether there
// was one. With onlyIfMissing a local model is kept.
func (x *Snapshots) PullModel(ctx context.Context, tenant, name string, restoredMark int64, onlyIfMissing bool) (bool, error) {
	if x.Models == nil {
		return false, nil
	}
	if onlyIfMissing {
		v, err := x.Models.ProfileModelVersion(ctx, tenant, name)
		if err != nil {
			return false, err
		}
		if v > 0 {
			return false, nil
		}
	}
	data, err := x.Store.Get(ctx, ModelKey(tenant, name))
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("pull model %s/%s: %w", tenant, name, err)
	}
	if x.CheckModel != nil {
		if err := x.CheckModel(name, data); err != nil {
			return false, memento.WrapError(memento.EINVALID, err, "the snapshot model %s of %s in %s cannot be read: %v", name, tenant, x.Store, err)
		}
	}
	if _, err := x.Models.SaveProfileModel(ctx, memento.ProfileModel{Tenant: tenant, Name: name, EventsMark: restoredMark, Data: data}, false); err != nil {
		return false, fmt.Errorf("pull model %s/%s: %w", tenant, name, err)
	}
	return true, nil
}
