package pipeline

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memento-ai/memento"
)

// schemaFS holds the built-in schemas, one JSON file each.
//
//go:embed schemas/*.json
var schemaFS embed.FS

// Names of the built-in schemas.
const (
	SchemaMovie   = "movie"   // the 14 attributes of a viewer's taste and habits
	SchemaGeneric = "generic" // facts about a person from general conversation
	SchemaDefault = "default" // movie followed by generic
)

// BuiltinSchema returns a built-in schema by name: SchemaMovie,
// SchemaGeneric or SchemaDefault (both, movie first). Errors: EINVALID for
// another name.
func BuiltinSchema(name string) (memento.Schema, error) {
	switch name {
	case SchemaMovie, SchemaGeneric:
		f, err := schemaFS.Open("schemas/" + name + ".json")
		if err != nil {
			return memento.Schema{}, fmt.Errorf("open built-in schema %s: %w", name, err)
		}
		defer f.Close()
		return ReadSchema(f)
	case SchemaDefault, "":
		movie, err := BuiltinSchema(SchemaMovie)
		if err != nil {
			return memento.Schema{}, err
		}
		generic, err := BuiltinSchema(SchemaGeneric)
		if err != nil {
			return memento.Schema{}, err
		}
		return movie.Merge(SchemaDefault, generic), nil
	}
	return memento.Schema{}, memento.Errorf(memento.EINVALID, "schema %q is not built in; use %s, %s, %s or a JSON file", name, SchemaDefault, SchemaMovie, SchemaGeneric)
}

// DefaultSchema returns the schema used unless another is configured: the
// movie schema followed by the generic one.
func DefaultSchema() memento.Schema {
	s, err := BuiltinSchema(SchemaDefault)
	if err != nil {
		// The built-in files are part of the binary and tested; failing
		// here means the build is broken.
		return memento.Schema{Name: "invalid", Attributes: nil}
	}
	return s
}

// ReadSchema decodes a schema from JSON ({"name", "attributes": [{"name",
// "description", "mode"}]}), upper-cases attribute names and validates it.
// Unknown fields are refused, so a typo in a file is reported, not
// ignored. Errors: EINVALID.
func ReadSchema(r io.Reader) (memento.Schema, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s memento.Schema
	if err := dec.Decode(&s); err != nil {
		return memento.Schema{}, memento.WrapError(memento.EINVALID, err, "schema is not valid JSON of the schema shape: %v", err)
	}
	for i := range s.Attributes {
		s.Attributes[i].Name = strings.ToUpper(strings.TrimSpace(s.Attributes[i].Name))
		s.Attributes[i].Mode = strings.ToLower(strings.TrimSpace(s.Attributes[i].Mode))
		if s.Attributes[i].Mode == "" {
			s.Attributes[i].Mode = memento.ModeSemantic
		}
	}
	if err := s.Validate(); err != nil {
		return memento.Schema{}, err
	}
	return s, nil
}

// LoadSchema returns the schema named by spec: a built-in name (default,
// movie, generic) or the path of a JSON schema file. Errors: EINVALID.
func LoadSchema(spec string) (memento.Schema, error) {
	switch spec {
	case "", SchemaDefault, SchemaMovie, SchemaGeneric:
		return BuiltinSchema(spec)
	}
	f, err := os.Open(spec)
	if err != nil {
		return memento.Schema{}, memento.WrapError(memento.EINVALID, err, "schema file %s cannot be read: %v", spec, err)
	}
	defer f.Close()
	s, err := ReadSchema(f)
	if err != nil {
		return memento.Schema{}, memento.WrapError(memento.EINVALID, err, "schema file %s: %s", spec, memento.ErrorMessage(err))
	}
	return s, nil
}
