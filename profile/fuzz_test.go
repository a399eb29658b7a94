package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// checkEventsOut is what every decoded event must satisfy once
// CheckEvents passed it: an id and a title the store accepts and a time it
// can hold.
func checkEventsOut(t *testing.T, events []memento.Event) {
	t.Helper()
	for i, e := range events {
		if CheckEvents(context.Background(), []memento.Event{e}, nil) != nil {
			continue
		}
		if err := memento.CheckOptionalID("id", e.ID); err != nil {
			t.Fatalf("events[%d] passed CheckEvents with id %q: %v", i, e.ID, err)
		}
		if err := memento.CheckID("title", e.TitleID); err != nil {
			t.Fatalf("events[%d] passed CheckEvents with title %q: %v", i, e.TitleID, err)
		}
		if err := memento.CheckTime("at", e.At); err != nil {
			t.Fatalf("events[%d] passed CheckEvents at %v", i, e.At)
		}
	}
}

// FuzzParseEvents feeds the body decoder of POST /v1/users/{user}/events
// arbitrary bytes: it refuses with EINVALID or ETOOLARGE, or returns 1 to
// MaxEvents events that encode back to a body decoding to the same events.
func FuzzParseEvents(f *testing.F) {
	for _, seed := range []string{
		`{"id":"e1","type":"rated","title":"ml:1","value":4.5,"at":"2025-05-01T20:00:00Z"}`,
		`[{"type":"liked","title":"wiki:The_Avengers_(2012_film)"},{"type":"abandoned","title":"imdb:tt0111161","value":0.3}]`,
		`{"type":"liked","title":"t01","at":"9999-12-31T00:00:00Z"}`, `{"type":"liked","title":"t","user":"ann"}`,
		`[]`, `"x"`, `[{"type":"liked","title":"t"}, 1]`, `{"id":"\u0000","type":"watched","title":"t"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		events, err := ParseEvents(body)
		if err != nil {
			if c := memento.ErrorCode(err); c != memento.EINVALID && c != memento.ETOOLARGE {
				t.Fatalf("ParseEvents = %v, want EINVALID or ETOOLARGE", err)
			}
			return
		}
		if len(events) == 0 || len(events) > MaxEvents {
			t.Fatalf("ParseEvents returned %d events", len(events))
		}
		checkEventsOut(t, events)
		ins := make([]EventInput, len(events))
		for i, e := range events {
			ins[i] = EventInput{ID: e.ID, Type: string(e.Type), Title: e.TitleID, Value: e.Value}
			if !e.At.IsZero() {
				at := e.At
				ins[i].At = &at
			}
		}
		again, err := json.Marshal(ins)
		if err != nil {
			t.Fatalf("encode %+v: %v", ins, err)
		}
		back, err := ParseEvents(again)
		if err != nil {
			t.Fatalf("the decoded events, encoded again as %s, are refused: %v", again, err)
		}
		for i := range back {
			a, b := events[i], back[i]
			if a.ID != b.ID || a.Type != b.Type || a.TitleID != b.TitleID || !a.At.Equal(b.At) || (a.Value == nil) != (b.Value == nil) || a.Value != nil && *a.Value != *b.Value {
				t.Fatalf("events[%d] = %+v, after a round trip %+v", i, a, b)
			}
		}
	})
}

// FuzzParseImportLine feeds one line of `memento events import`: refused
// with EINVALID, or an event with a user id the store accepts.
func FuzzParseImportLine(f *testing.F) {
	for _, seed := range []string{
		`{"user":"ann","type":"rated","title":"ml:1","value":4,"at":"2025-05-01T20:00:00Z"}`,
		`{"user":"ann@example.com","id":"e1","type":"liked","title":"t01"}`,
		`{"type":"liked","title":"t01"}`, `{"user":"\u00ff\u0001","type":"liked","title":"t01"}`,
		`{"user":" ann","type":"liked","title":"t01","at":"0001-01-01T00:00:00Z"}`, `{"user":"ann"}{"user":"bob"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		user, e, err := ParseImportLine(line)
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID {
				t.Fatalf("ParseImportLine = %v, want EINVALID", err)
			}
			return
		}
		if err := memento.CheckID("user", user); err != nil {
			t.Fatalf("ParseImportLine accepted user %q: %v", user, err)
		}
		checkEventsOut(t, []memento.Event{e})
	})
}

// FuzzDecodeModel feeds DecodeModel (the co-occurrence model kept in
// snapshots) arbitrary bytes: it fails with a corrupt-model error, or
// decodes a model whose encoding decodes to the same model.
func FuzzDecodeModel(f *testing.F) {
	b := NewModelBuilder(ModelOptions{})
	at := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	for u, titles := range [][]string{{"ml:1", "ml:2", "ml:3"}, {"ml:1", "ml:2"}, {"ml:2", "ml:3", "ml:4"}} {
		var evs []memento.Event
		for _, id := range titles {
			evs = append(evs, memento.Event{User: string(rune('a' + u)), Type: memento.EventLiked, TitleID: id, At: at})
		}
		b.Add(evs)
	}
	model, err := b.Build().MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(model)
	f.Add(model[:len(model)/2])
	f.Add(append(bytes.Clone(model), 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeModel(data)
		if err != nil {
			return
		}
		if _, err := ModelUsers(data); err != nil {
			t.Fatalf("DecodeModel accepted what ModelUsers refuses: %v", err)
		}
		for i := range m.Len() {
			if _, ok := m.Index(m.ID(int32(i))); !ok {
				t.Fatalf("title %d (%q) is not in the index", i, m.ID(int32(i)))
			}
			for _, n := range m.Neighbours(int32(i)) {
				if n.Title < 0 || int(n.Title) >= m.Len() {
					t.Fatalf("neighbour %d of title %d is out of range", n.Title, i)
				}
			}
		}
		enc, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of a decoded model: %v", err)
		}
		m2, err := DecodeModel(enc)
		if err != nil {
			t.Fatalf("a decoded model, encoded again, does not decode: %v", err)
		}
		enc2, _ := m2.MarshalBinary()
		if !bytes.Equal(enc, enc2) {
			t.Fatal("encoding a decoded model is not stable")
		}
	})
}
