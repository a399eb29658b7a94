package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// MaxEvents bounds the events of one request or import line batch.
const MaxEvents = 1000

// maxEventID bounds a client's event id, as the store does.
const maxEventID = 256

// EventInput is an event as clients send it: {"id", "type", "title",
// "value", "at"}, plus "user" on the lines of a bulk import.
type EventInput struct {
	ID    string     `json:"id,omitempty"`
	User  string     `json:"user,omitempty"`
	Type  string     `json:"type"`
	Title string     `json:"title"`
	Value *float64   `json:"value,omitempty"`
	At    *time.Time `json:"at,omitempty"`
}

// Event converts the input to a memento.Event (without user).
func (in EventInput) Event() memento.Event {
	e := memento.Event{ID: in.ID, Type: memento.EventType(in.Type), TitleID: in.Title, Value: in.Value}
	if in.At != nil {
		e.At = in.At.UTC()
	}
	return e
}

// ParseEvents reads one event object or an array of them, as POST
// /v1/users/{user}/events takes them. Unknown fields (including "user":
// the user is in the path) are refused. Errors: EINVALID naming the event
// and field, ETOOLARGE for more than MaxEvents.
func ParseEvents(body []byte) ([]memento.Event, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "the request body must be an event or a list of events, got nothing")
	}
	var raws []json.RawMessage
	single := body[0] == '{'
	if single {
		raws = []json.RawMessage{body}
	} else if body[0] == '[' {
		if err := json.Unmarshal(body, &raws); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "the request body is not a valid JSON list of events: %v", err)
		}
	} else {
		return nil, memento.Errorf(memento.EINVALID, "the request body must be an event object or a list of events")
	}
	if len(raws) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "the list of events is empty")
	}
	if len(raws) > MaxEvents {
		return nil, memento.Errorf(memento.ETOOLARGE, "%d events in one request, over the limit of %d", len(raws), MaxEvents)
	}
	out := make([]memento.Event, len(raws))
	for i, raw := range raws {
		in, err := decodeEvent(raw)
		if err != nil {
			return nil, memento.Errorf(memento.EINVALID, "events[%d]: %s", i, err)
		}
		if in.User != "" {
			return nil, memento.Errorf(memento.EINVALID, "events[%d]: unknown field \"user\" (the user is named in the path)", i)
		}
		out[i] = in.Event()
	}
	return out, nil
}

// decodeEvent decodes one event strictly, with a short error message.
func decodeEvent(raw []byte) (EventInput, error) {
	var in EventInput
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		var pe *time.ParseError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return in, fmt.Errorf("%s must be a %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		case errors.As(err, &pe):
			return in, fmt.Errorf("at must be an RFC 3339 time such as 2025-01-02T20:00:00Z, got %q", pe.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return in, fmt.Errorf("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
		case errors.Is(err, io.EOF):
			return in, fmt.Errorf("empty event")
		}
		return in, fmt.Errorf("not a valid event object: %v", err)
	}
	if dec.More() {
		return in, fmt.Errorf("unexpected data after the event")
	}
	return in, nil
}

func jsonKind(k string) string {
	switch k {
	case "float64", "int", "int64":
		return "number"
	case "ptr", "struct":
		return "value of the right shape"
	}
	return k
}

// ParseImportLine reads one line of `memento events import`: an event with
// a "user" field. Errors: EINVALID naming the field.
func ParseImportLine(line []byte) (user string, e memento.Event, err error) {
	in, err := decodeEvent(line)
	if err != nil {
		return "", e, memento.Errorf(memento.EINVALID, "%s", err)
	}
	if strings.TrimSpace(in.User) == "" {
		return "", e, memento.Errorf(memento.EINVALID, "user is required on every line")
	}
	if err := memento.CheckID("user", in.User); err != nil {
		return "", e, err
	}
	return in.User, in.Event(), nil
}

// CheckEvents validates events before they are stored, naming the first
// bad one: a known type, a title the catalog has, an id of at most 256
// bytes, and the value the type needs (a rating from 0.5 to 5 for rated,
// an optional fraction watched from 0 to 1 for abandoned, none otherwise).
// Errors: EINVALID.
func CheckEvents(ctx context.Context, events []memento.Event, cat memento.Catalog) error {
	for i, e := range events {
		switch {
		case !e.Type.Valid():
			return memento.Errorf(memento.EINVALID, "events[%d].type must be one of %s, got %q", i, typeList(), e.Type)
		case strings.TrimSpace(e.TitleID) == "":
			return memento.Errorf(memento.EINVALID, "events[%d].title is required", i)
		case len(e.ID) > maxEventID:
			return memento.Errorf(memento.EINVALID, "events[%d].id must be at most %d bytes", i, maxEventID)
		}
		// Ids and times the store would refuse, refused here with the
		// event's index (or an import's line number).
		if err := memento.CheckOptionalID(fmt.Sprintf("events[%d].id", i), e.ID); err != nil {
			return err
		}
		if err := memento.CheckID(fmt.Sprintf("events[%d].title", i), e.TitleID); err != nil {
			return err
		}
		if err := memento.CheckTime(fmt.Sprintf("events[%d].at", i), e.At); err != nil {
			return err
		}
		switch e.Type {
		case memento.EventRated:
			if e.Value == nil {
				return memento.Errorf(memento.EINVALID, "events[%d].value is required for rated: a rating from 0.5 to 5", i)
			} else if *e.Value < 0.5 || *e.Value > 5 {
				return memento.Errorf(memento.EINVALID, "events[%d].value must be a rating from 0.5 to 5, got %g", i, *e.Value)
			}
		case memento.EventAbandoned:
			if e.Value != nil && (*e.Value < 0 || *e.Value > 1) {
				return memento.Errorf(memento.EINVALID, "events[%d].value must be the fraction watched, from 0 to 1, got %g", i, *e.Value)
			}
		default:
			if e.Value != nil {
				return memento.Errorf(memento.EINVALID, "events[%d].value must be left out for %s", i, e.Type)
			}
		}
		if cat != nil {
			if _, err := cat.Title(ctx, e.TitleID); memento.ErrorCode(err) == memento.ENOTFOUND {
				return memento.Errorf(memento.EINVALID, "events[%d].title %q is not in the catalog", i, e.TitleID)
			} else if err != nil {
				return fmt.Errorf("check events[%d].title: %w", i, err)
			}
		}
	}
	return nil
}

func typeList() string {
	names := make([]string, len(memento.EventTypes))
	for i, t := range memento.EventTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
