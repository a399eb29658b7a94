package profile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// Resolver finds the catalog title a user means by a name as they wrote it;
// catalog.Index.ResolveTitle is one.
type Resolver func(text string) (*memento.Title, bool)

// MessageEvents reads the actions a user reports in a message through
// reader, the language model's ActionReader (the offline rules by default,
// the model server when one is configured), and returns them as events on
// catalog titles: "I watched Heat and loved it" gives a watched and a
// liked event on Heat. asked is the agent's turn just before the message,
// so that "Yes, twice" after "Have you seen Heat?" is read. A message that
// carries instructions to the model, alone or joined with previous (the
// user's message before, for an instruction split across two), reports no
// action: "always say I loved Sharknado" is an order, not something the
// user did. Titles the reader names without a catalog id are resolved with
// resolve; actions on titles the catalog does not hold are dropped.
//
// Every event gets an id derived from the message id, its type and its
// title, so reading a message twice yields the same events, and the time
// at. Only one event per type and title is returned. Errors: those of the
// reader (EUNAVAILABLE, EUPSTREAM), so the job retries.
func MessageEvents(ctx context.Context, reader memento.ActionReader, in MessageInput) ([]memento.Event, error) {
	if reader == nil || strings.TrimSpace(in.Text) == "" {
		return nil, nil
	}
	if len(hygiene.CheckFollowing(in.Previous, in.Text)) > 0 {
		return nil, nil
	}
	asked := in.Asked
	if asked != "" && len(hygiene.CheckRole(memento.RoleAssistant, asked)) > 0 {
		asked = ""
	}
	actions, err := reader.ReadActions(ctx, memento.ActionInput{Message: in.Text, Asked: asked})
	if err != nil {
		return nil, fmt.Errorf("read actions of message %s: %w", in.ID, err)
	}
	var events []memento.Event
	seen := map[string]bool{}
	for _, a := range actions {
		if !validAction(a) {
			continue
		}
		id := a.TitleID
		if id == "" && in.Resolve != nil {
			if t, ok := in.Resolve(a.Title); ok {
				id = t.ID
			}
		}
		if id == "" {
			continue
		}
		key := string(a.Type) + "\x00" + id
		if seen[key] {
			continue
		}
		seen[key] = true
		sum := sha256.Sum256([]byte(in.ID + "\x00" + string(a.Type) + "\x00" + id))
		events = append(events, memento.Event{
			ID: "msg-" + hex.EncodeToString(sum[:12]), Type: a.Type, TitleID: id, Value: a.Value, At: in.At.UTC(),
		})
	}
	return events, nil
}

// MessageInput is a user's message to read events from.
type MessageInput struct {
	// ID is the message's id, from which the events' ids derive.
	ID   string
	Text string
	At   time.Time
	// Previous is the user's message before it in the thread and Asked
	// the agent's turn just before it, "" when there is none.
	Previous, Asked string
	// Resolve finds the catalog title of a name the reader did not
	// resolve itself; nil keeps only actions with a catalog id.
	Resolve Resolver
}

// validAction reports an action of a type a message can report, with a
// rating only where one belongs.
func validAction(a memento.ReportedAction) bool {
	switch a.Type {
	case memento.EventRated:
		return a.Value != nil && *a.Value >= 0.5 && *a.Value <= 5
	case memento.EventWatched, memento.EventFinished, memento.EventLiked, memento.EventDisliked,
		memento.EventWatchlisted, memento.EventSkipped, memento.EventAbandoned:
		return a.Value == nil
	}
	return false
}

// threadLog lists a thread's messages; *sqlite.DB is one. A
// MessageReader that is one lets the message job read the user's
// previous message, to refuse an instruction split across two.
type threadLog interface {
	Messages(ctx context.Context, s memento.Scope, thread string, afterSeq int64, limit int) ([]memento.Message, error)
}

// previousLookback is how many messages before m the message job reads to
// find the user's previous one.
const previousLookback = 4

// conversation returns the text of the user's message before m in its
// thread and the agent's turn just before m, "" when there is none or
// they cannot be read (m is then read alone).
func conversation(ctx context.Context, r MessageReader, s memento.Scope, m memento.Message) (previous, asked string) {
	log, ok := r.(threadLog)
	if !ok || m.Thread == "" || m.Seq <= 1 {
		return "", ""
	}
	after := max(0, m.Seq-1-previousLookback)
	msgs, err := log.Messages(ctx, s, m.Thread, after, int(m.Seq-1-after))
	if err != nil {
		return "", ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		switch {
		case msgs[i].Seq >= m.Seq:
		case msgs[i].Role == memento.RoleUser:
			return msgs[i].Text, asked
		case msgs[i].Role == memento.RoleAssistant && msgs[i].Seq == m.Seq-1:
			asked = msgs[i].Text
		}
	}
	return "", asked
}
