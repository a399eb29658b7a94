package profile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/profile"
)

func TestParseAndCheckEvents(t *testing.T) {
	idx := catalog.New(testTitles())
	tests := []struct {
		name, body string
		code, msg  string
		n          int
	}{
		{name: "one", body: `{"id":"e1","type":"watched","title":"heat","at":"2025-01-02T20:00:00Z"}`, n: 1},
		{name: "many", body: `[{"type":"rated","title":"heat","value":4.5},{"type":"abandoned","title":"up","value":0.3},{"type":"abandoned","title":"up"}]`, n: 3},
		{name: "empty body", body: ` `, code: memento.EINVALID, msg: "the request body must be an event or a list of events, got nothing"},
		{name: "not JSON", body: `{"type":`, code: memento.EINVALID, msg: "events[0]: not a valid event object: unexpected EOF"},
		{name: "a string", body: `"watched"`, code: memento.EINVALID, msg: "the request body must be an event object or a list of events"},
		{name: "empty list", body: `[]`, code: memento.EINVALID, msg: "the list of events is empty"},
		{name: "unknown field", body: `[{"type":"watched","titel":"heat"}]`, code: memento.EINVALID, msg: `events[0]: unknown field "titel"`},
		{name: "user in body", body: `{"user":"x","type":"watched","title":"heat"}`, code: memento.EINVALID, msg: `events[0]: unknown field "user" (the user is named in the path)`},
		{name: "value type", body: `{"type":"rated","title":"heat","value":"five"}`, code: memento.EINVALID, msg: `events[0]: value must be a number, got string`},
		{name: "bad time", body: `{"type":"watched","title":"heat","at":"yesterday"}`, code: memento.EINVALID, msg: `events[0]: at must be an RFC 3339 time such as 2025-01-02T20:00:00Z, got "yesterday"`},
		{name: "unknown type", body: `[{"type":"watched","title":"heat"},{"type":"loved","title":"heat"}]`, code: memento.EINVALID,
			msg: `events[1].type must be one of watched, rated, liked, disliked, watchlisted, skipped, abandoned, finished, got "loved"`},
		{name: "unknown title", body: `{"type":"watched","title":"wiki:Nope"}`, code: memento.EINVALID, msg: `events[0].title "wiki:Nope" is not in the catalog`},
		{name: "no title", body: `{"type":"watched"}`, code: memento.EINVALID, msg: `events[0].title is required`},
		{name: "rating missing", body: `{"type":"rated","title":"heat"}`, code: memento.EINVALID, msg: `events[0].value is required for rated: a rating from 0.5 to 5`},
		{name: "rating out of range", body: `{"type":"rated","title":"heat","value":7}`, code: memento.EINVALID, msg: `events[0].value must be a rating from 0.5 to 5, got 7`},
		{name: "fraction out of range", body: `{"type":"abandoned","title":"heat","value":-0.5}`, code: memento.EINVALID, msg: `events[0].value must be the fraction watched, from 0 to 1, got -0.5`},
		{name: "value on liked", body: `{"type":"liked","title":"heat","value":1}`, code: memento.EINVALID, msg: `events[0].value must be left out for liked`},
		{name: "long id", body: `{"id":"` + strings.Repeat("x", 300) + `","type":"liked","title":"heat"}`, code: memento.EINVALID, msg: `events[0].id must be at most 256 bytes`},
		{name: "too many", body: "[" + strings.Repeat(`{"type":"liked","title":"heat"},`, profile.MaxEvents) + `{"type":"liked","title":"heat"}]`,
			code: memento.ETOOLARGE, msg: "1001 events in one request, over the limit of 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := profile.ParseEvents([]byte(tt.body))
			if err == nil {
				err = profile.CheckEvents(context.Background(), events, idx)
			}
			if memento.ErrorCode(err) != tt.code {
				t.Fatalf("error %v, want code %q", err, tt.code)
			}
			if err != nil {
				if got := memento.ErrorMessage(err); got != tt.msg {
					t.Errorf("message = %q\n want %q", got, tt.msg)
				}
				return
			}
			if len(events) != tt.n {
				t.Errorf("got %d events, want %d", len(events), tt.n)
			}
		})
	}
}

func TestParseImportLine(t *testing.T) {
	user, e, err := profile.ParseImportLine([]byte(`{"user":"ann","id":"x","type":"rated","title":"heat","value":4}`))
	if err != nil || user != "ann" || e.ID != "x" || e.Type != memento.EventRated || *e.Value != 4 {
		t.Errorf("ParseImportLine = %q, %+v, %v", user, e, err)
	}
	if _, _, err := profile.ParseImportLine([]byte(`{"type":"rated","title":"heat","value":4}`)); memento.ErrorMessage(err) != "user is required on every line" {
		t.Errorf("a line without user: %v", err)
	}
}
