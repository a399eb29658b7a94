package pipeline

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

// FuzzReadSchema feeds the attribute-schema reader (--schema FILE) any
// document, seeded with the built-in schemas: it refuses with EINVALID, or
// returns a schema that passes Validate with upper-case names and known
// modes, and that reads back the same once written out.
func FuzzReadSchema(f *testing.F) {
	for _, name := range []string{"movie", "generic"} {
		b, err := schemaFS.ReadFile("schemas/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, seed := range []string{
		`{"name":"x","attributes":[{"name":"likes","description":"what they like"}]}`,
		`{"name":"x","attributes":[{"name":"A","description":"d","mode":"EPISODIC"},{"name":"a","description":"e"}]}`,
		`{"name":"x","attributes":[{"name":"two words","description":"d"}]}`, `{"name":"x","attributes":[],"extra":1}`,
		`{"name":"x","attributes":[{"name":"*","description":"d","mode":"semantic"}]}`, `[]`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSchema(bytes.NewReader(data))
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID {
				t.Fatalf("ReadSchema = %v, want EINVALID", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ReadSchema returned a schema that fails Validate: %v", err)
		}
		for _, a := range s.Attributes {
			if a.Name != strings.ToUpper(a.Name) || !memento.ValidMode(a.Mode) {
				t.Fatalf("attribute %+v is not normalised", a)
			}
			if got, ok := s.Attribute(strings.ToLower(a.Name)); !ok || got.Name != a.Name {
				t.Fatalf("Attribute(%q) = %+v, %v", strings.ToLower(a.Name), got, ok)
			}
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("encode %+v: %v", s, err)
		}
		back, err := ReadSchema(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the schema written out as %s does not read back: %v", out, err)
		}
		if b, _ := json.Marshal(back); !bytes.Equal(b, out) {
			t.Fatalf("schema %s reads back as %s", out, b)
		}
	})
}
