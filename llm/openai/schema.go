package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// jsonSchema is the subset of JSON Schema the task outputs are described in:
// types (a nullable field lists "null" too), object properties in a fixed
// order, required properties, additionalProperties false, array items,
// enums and numeric bounds. It is what OpenAI's strict structured output
// accepts, and small enough to validate by hand, which the package does
// for servers that only promise a JSON object.
type jsonSchema struct {
	Type        []string
	Description string
	// Properties keep their order when marshalled: a model writes fields in
	// schema order, so reasons come before verdicts.
	Properties []property
	Required   []string
	// Closed marshals as additionalProperties: false.
	Closed  bool
	Items   *jsonSchema
	Enum    []any
	Minimum *float64
	Maximum *float64
	// openEnum makes the enum guidance for the model only: validate maps a
	// value onto it when it can and otherwise leaves the value to the
	// task's own check.
	openEnum bool
}

// property is one named property of an object schema.
type property struct {
	Name   string
	schema *jsonSchema
}

// MarshalJSON writes the schema as JSON Schema, properties in order.
func (s *jsonSchema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	field := func(name string, v any) error {
		if !first {
			b.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("marshal schema field %s: %w", name, err)
		}
		b.Write(raw)
		return nil
	}
	var err error
	switch len(s.Type) {
	case 0:
	case 1:
		err = field("type", s.Type[0])
	default:
		err = field("type", s.Type)
	}
	if err == nil && s.Description != "" {
		err = field("description", s.Description)
	}
	if err == nil && s.Properties != nil {
		err = field("properties", orderedProperties(s.Properties))
	}
	if err == nil && s.Required != nil {
		err = field("required", s.Required)
	}
	if err == nil && s.Closed {
		err = field("additionalProperties", false)
	}
	if err == nil && s.Items != nil {
		err = field("items", s.Items)
	}
	if err == nil && s.Enum != nil {
		err = field("enum", s.Enum)
	}
	if err == nil && s.Minimum != nil {
		err = field("minimum", *s.Minimum)
	}
	if err == nil && s.Maximum != nil {
		err = field("maximum", *s.Maximum)
	}
	if err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type orderedProperties []property

func (ps orderedProperties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Name)
		b.Write(k)
		b.WriteByte(':')
		v, err := p.schema.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Schema builders. Every object is closed and requires all its properties,
// as strict structured output demands; optional values are nullable.

func object(props ...property) *jsonSchema {
	s := &jsonSchema{Type: []string{"object"}, Properties: props, Closed: true, Required: []string{}}
	for _, p := range props {
		s.Required = append(s.Required, p.Name)
	}
	return s
}

func prop(name string, s *jsonSchema) property { return property{Name: name, schema: s} }

func str() *jsonSchema     { return &jsonSchema{Type: []string{"string"}} }
func boolean() *jsonSchema { return &jsonSchema{Type: []string{"boolean"}} }
func integer() *jsonSchema { return &jsonSchema{Type: []string{"integer"}} }
func number() *jsonSchema  { return &jsonSchema{Type: []string{"number"}} }
func array(items *jsonSchema) *jsonSchema {
	return &jsonSchema{Type: []string{"array"}, Items: items}
}

// nullable adds "null" to the types of s (and to its enum, if any).
func nullable(s *jsonSchema) *jsonSchema {
	s.Type = append(s.Type, "null")
	if s.Enum != nil {
		s.Enum = append(s.Enum, nil)
	}
	return s
}

func enumOf[T any](s *jsonSchema, values ...T) *jsonSchema {
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

func between(s *jsonSchema, lo, hi float64) *jsonSchema {
	s.Minimum, s.Maximum = &lo, &hi
	return s
}

// validate checks a decoded JSON value (as encoding/json decodes into any)
// against s and returns the first problem, naming its path ("$.facts[1].text").
// It is tolerant where models are sloppy but meaning is clear: unknown
// properties of a closed object are dropped rather than refused, a missing
// property whose schema allows null counts as null, and a string matching
// an enum value but for case is replaced by that value. The value is
// cleaned in place; validate returns the cleaned root.
func validate(s *jsonSchema, v any, path string) (any, error) {
	if !s.allows(v) {
		return nil, fmt.Errorf("%s must be %s, got %s", path, s.typeWords(), describeValue(v))
	}
	if s.Enum != nil && v != nil {
		canon, ok := matchEnum(s.Enum, v)
		switch {
		case ok:
			v = canon
		case !s.openEnum:
			return nil, fmt.Errorf("%s must be one of %s, got %s", path, enumWords(s.Enum), describeValue(v))
		}
	}
	switch v := v.(type) {
	case map[string]any:
		known := make(map[string]bool, len(s.Properties))
		for _, p := range s.Properties {
			known[p.Name] = true
			pv, ok := v[p.Name]
			if !ok {
				if slices.Contains(s.Required, p.Name) && !slices.Contains(p.schema.Type, "null") {
					return nil, fmt.Errorf("%s is missing the required field %q", path, p.Name)
				}
				continue
			}
			clean, err := validate(p.schema, pv, path+"."+p.Name)
			if err != nil {
				return nil, err
			}
			v[p.Name] = clean
		}
		if s.Closed {
			for k := range v {
				if !known[k] {
					delete(v, k)
				}
			}
		}
	case []any:
		if s.Items != nil {
			for i, item := range v {
				clean, err := validate(s.Items, item, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				v[i] = clean
			}
		}
	case float64:
		if s.Minimum != nil && v < *s.Minimum {
			return nil, fmt.Errorf("%s must be at least %v, got %v", path, *s.Minimum, v)
		}
		if s.Maximum != nil && v > *s.Maximum {
			return nil, fmt.Errorf("%s must be at most %v, got %v", path, *s.Maximum, v)
		}
	}
	return v, nil
}

// allows reports whether v has one of the schema's types; a schema without
// types allows anything.
func (s *jsonSchema) allows(v any) bool {
	if len(s.Type) == 0 {
		return true
	}
	for _, t := range s.Type {
		switch v := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case float64:
			if t == "number" || (t == "integer" && v == math.Trunc(v) && !math.IsInf(v, 0)) {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		}
	}
	return false
}

func (s *jsonSchema) typeWords() string {
	words := make([]string, len(s.Type))
	for i, t := range s.Type {
		switch t {
		case "object", "array", "integer":
			words[i] = "an " + t
		case "null":
			words[i] = "null"
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

// matchEnum returns the enum value v stands for: v itself, or for a
// string the value it equals ignoring case.
func matchEnum(enum []any, v any) (any, bool) {
	got, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	for _, e := range enum {
		want, err := json.Marshal(e)
		if err == nil && bytes.Equal(got, want) {
			return v, true
		}
	}
	if str, ok := v.(string); ok {
		for _, e := range enum {
			if es, ok := e.(string); ok && strings.EqualFold(es, strings.TrimSpace(str)) {
				return es, true
			}
		}
	}
	return nil, false
}

func enumWords(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 60 {
		b = append(b[:57], "..."...)
	}
	return string(b)
}
