package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/atomicfile"
)

// Store keeps snapshot objects by key: one JSON document per user and one
// object per learned model. Implementations: FileStore here, s3.Store for
// S3-compatible object storage.
type Store interface {
	// Put writes an object atomically: a reader sees the old object or
	// the new one, never a part. Errors: EUNAVAILABLE.
	Put(ctx context.Context, key string, data []byte) error
	// Get reads an object. Errors: ENOTFOUND, EUNAVAILABLE.
	Get(ctx context.Context, key string) ([]byte, error)
	// List returns the keys under a prefix, in order. Errors: EUNAVAILABLE.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes an object; a missing one is no error. Errors:
	// EUNAVAILABLE.
	Delete(ctx context.Context, key string) error
	// Ping checks that the store can be reached and written. Errors:
	// EUNAVAILABLE with a message that names the store.
	Ping(ctx context.Context) error
	// String names the store as its URL, without secrets.
	String() string
}

// Location is a parsed --snapshot URL: file:///dir or s3://bucket/prefix.
type Location struct {
	Scheme string // "file" or "s3"
	// Dir is the directory of a file location.
	Dir string
	// Bucket and Prefix name an s3 location; Prefix has no leading or
	// trailing slash.
	Bucket string
	Prefix string
	raw    string
}

// String returns the URL as given.
func (l Location) String() string { return l.raw }

// ParseURL reads a snapshot URL. file:///abs/dir names a directory
// (relative paths are refused: they would change with the working
// directory); s3://bucket/prefix names a bucket and an optional key
// prefix. Errors: EINVALID naming what is wrong.
func ParseURL(raw string) (Location, error) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return Location{}, memento.Errorf(memento.EINVALID, "snapshot URL %q must look like file:///dir or s3://bucket/prefix", raw)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return Location{}, memento.Errorf(memento.EINVALID, "snapshot URL %q: a file URL has no host; write file:///absolute/dir", raw)
		}
		if u.Path == "" || !filepath.IsAbs(u.Path) {
			return Location{}, memento.Errorf(memento.EINVALID, "snapshot URL %q must name an absolute directory, such as file:///var/lib/memento/snapshots", raw)
		}
		return Location{Scheme: "file", Dir: filepath.Clean(u.Path), raw: raw}, nil
	case "s3":
		if u.Host == "" {
			return Location{}, memento.Errorf(memento.EINVALID, "snapshot URL %q must name a bucket: s3://bucket/prefix", raw)
		}
		if u.User != nil {
			return Location{}, memento.Errorf(memento.EINVALID, "snapshot URL %q must not hold credentials; set MEMENTO_S3_ACCESS_KEY and MEMENTO_S3_SECRET_KEY", raw)
		}
		return Location{Scheme: "s3", Bucket: u.Host, Prefix: strings.Trim(u.Path, "/"), raw: raw}, nil
	default:
		return Location{}, memento.Errorf(memento.EINVALID, "snapshot URL %q must start with file:// or s3://", raw)
	}
}

// Keys of the snapshot objects. Ids are escaped (EscapeID), so any user id
// is a safe file name and object key.

// UserKey is the key of a user's document: users/<tenant>/<user>.json.
func UserKey(s memento.Scope) string {
	tenant := s.Tenant
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	return "users/" + EscapeID(tenant) + "/" + EscapeID(s.User) + ".json"
}

// UsersPrefix is the prefix of every user document of a tenant.
func UsersPrefix(tenant string) string {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	return "users/" + EscapeID(tenant) + "/"
}

// UserFromKey returns the user id of a key under UsersPrefix.
func UserFromKey(key string) (string, bool) {
	base := path.Base(key)
	if !strings.HasSuffix(base, ".json") {
		return "", false
	}
	id, err := url.PathUnescape(strings.TrimSuffix(base, ".json"))
	return id, err == nil && id != ""
}

// ModelKey is the key of a tenant's learned model: models/<tenant>/<name>.bin.
func ModelKey(tenant, name string) string {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	return "models/" + EscapeID(tenant) + "/" + EscapeID(name) + ".bin"
}

// EscapeID keeps letters, digits, '-' and '_' and writes every other byte
// as %XX, so an id cannot climb out of its directory ("..") or clash with
// another after case folding of the separators.
func EscapeID(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// FileStore keeps snapshot objects as files under a directory. Put writes
// a temporary file in the object's directory, syncs it, renames it over
// the object and syncs the directory, so a crash leaves the old object or
// the new one.
type FileStore struct {
	dir string
}

// OpenFile returns the store of a directory, creating it as needed.
func OpenFile(dir string) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, memento.WrapError(memento.EUNAVAILABLE, err, "snapshot directory %s cannot be created: %v", dir, err)
	}
	return &FileStore{dir: dir}, nil
}

// String returns the store's URL.
func (f *FileStore) String() string { return "file://" + filepath.ToSlash(f.dir) }

func (f *FileStore) path(key string) (string, error) {
	clean := path.Clean("/" + key)
	if key == "" || clean != "/"+key || strings.Contains(key, "\\") {
		return "", memento.Errorf(memento.EINVALID, "snapshot key %q is not a clean relative path", key)
	}
	return filepath.Join(f.dir, filepath.FromSlash(key)), nil
}

// Put writes the object atomically (temporary file, fsync, rename, fsync
// of the directory).
func (f *FileStore) Put(_ context.Context, key string, data []byte) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return memento.WrapError(memento.EUNAVAILABLE, err, "snapshot %s cannot be written: %v", key, err)
	}
	if err := atomicfile.Write(p, data, 0o600); err != nil {
		return memento.WrapError(memento.EUNAVAILABLE, err, "snapshot %s cannot be written: %v", key, err)
	}
	return nil
}

// Get reads an object. Errors: ENOTFOUND.
func (f *FileStore) Get(_ context.Context, key string) ([]byte, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, memento.Errorf(memento.ENOTFOUND, "snapshot %s not found", key)
	} else if err != nil {
		return nil, memento.WrapError(memento.EUNAVAILABLE, err, "snapshot %s cannot be read: %v", key, err)
	}
	return b, nil
}

// Delete removes an object and is quiet when it does not exist.
func (f *FileStore) Delete(_ context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return memento.WrapError(memento.EUNAVAILABLE, err, "snapshot %s cannot be removed: %v", key, err)
	}
	return nil
}

// List returns the keys of the objects under prefix, in order, leaving
// out temporary files.
func (f *FileStore) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") {
			return nil
		}
		rel, err := filepath.Rel(f.dir, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, memento.WrapError(memento.EUNAVAILABLE, err, "snapshots under %s cannot be listed: %v", f, err)
	}
	slices.Sort(keys)
	return keys, nil
}

// Ping checks that the directory exists and takes a file.
func (f *FileStore) Ping(ctx context.Context) error {
	if err := f.Put(ctx, ".ping", []byte("ok")); err != nil {
		return memento.WrapError(memento.EUNAVAILABLE, err, "snapshot store %s cannot be written: %s", f, memento.ErrorMessage(err))
	}
	return nil
}
