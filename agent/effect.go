package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// refEvents applies the titles a turn names to the next context and
// returns the events they reveal: titles the user has seen ("I've already
// seen Heat") and titles turned down by name or position ("not the second
// one") are excluded exactly and recorded as watched and skipped, and a
// rejection of everything shown records each of those as skipped, so no
// later thread of the user shows them again. Titles named as anchors
// ("something like Inception") become the context's Like. Names that
// match no title get a note.
func (a *Agent) refEvents(u *memento.Understanding, shown []memento.Title, thread string, seq int64, now time.Time, next *memento.ActiveContext, resp *Response) []memento.Event {
	var events []memento.Event
	record := func(typ memento.EventType, t memento.Title) {
		events = append(events, memento.Event{ID: eventID(thread, seq, typ, t.ID), Type: typ, TitleID: t.ID, At: now})
	}
	exclude := func(t memento.Title) {
		if !slices.Contains(next.ExcludedTitleIDs, t.ID) {
			next.ExcludedTitleIDs = append(next.ExcludedTitleIDs, t.ID)
		}
	}
	notFound := func(missing []string) {
		for _, m := range missing {
			resp.Notes = append(resp.Notes, fmt.Sprintf("I could not find %s in the catalog.", quoteName(m)))
		}
	}
	seen, missing := a.resolve(u.Seen, shown)
	notFound(missing)
	for _, t := range seen {
		exclude(t)
		record(memento.EventWatched, t)
	}
	rejected, missing := a.resolve(u.RejectTitles, shown)
	notFound(missing)
	for _, t := range rejected {
		exclude(t)
		record(memento.EventSkipped, t)
	}
	if u.Search && u.Reject {
		for _, t := range shown {
			record(memento.EventSkipped, t)
		}
	}
	if u.Like != nil {
		anchors, missing := a.resolve(u.Like, shown)
		notFound(missing)
		next.Like = make([]string, 0, len(anchors))
		for _, t := range anchors {
			next.Like = append(next.Like, t.ID)
		}
	}
	return events
}

// eventID names an event of a turn so that the turn computed again (after
// a conflict) or replayed records it once.
func eventID(thread string, seq int64, typ memento.EventType, title string) string {
	id := fmt.Sprintf("turn:%s#%d:%s:%s", thread, seq, typ, title)
	if len(id) <= 200 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "turn:" + hex.EncodeToString(sum[:16])
}

// quoteName quotes a name the user wrote, but not a reference such as
// "the second one".
func quoteName(s string) string {
	if strings.HasPrefix(s, "the ") && strings.HasSuffix(s, " one") || strings.HasPrefix(s, "number ") {
		return s
	}
	return fmt.Sprintf("%q", s)
}

// effect says, in one short clause, what long-term memory changed in the
// answer, or nothing when it changed nothing: when the titles shown are
// the ones a user without memory would have been shown, memory is not
// mentioned, whatever the reasons say. It names the remembered likes that
// moved titles in, the dislikes and the titles seen or turned down that
// kept titles out, and a dislike the request asked for anyway.
func (r *ranking) effect() string {
	var parts []string
	for _, it := range r.contradicted {
		parts = append(parts, fmt.Sprintf("you told me you %s, but you asked for %s, so here are the best-known ones anyway", secondPerson(it.Said), askedFor(it)))
	}
	if sameIDs(r.shown, r.base) {
		return strings.Join(parts, "; ")
	}
	shown := map[string]bool{}
	for _, c := range r.shown {
		shown[c.Title.ID] = true
	}
	var out, kept, likes []string
	for _, c := range r.base {
		if shown[c.Title.ID] {
			continue
		}
		switch {
		case c.drop && c.dropped != "":
			out = append(out, c.Title.Title)
		case c.dislike != nil && !slices.Contains(kept, c.dislike.label()):
			kept = append(kept, c.dislike.label())
		}
	}
	for _, c := range r.shown {
		for _, why := range c.memory {
			if !slices.Contains(likes, why) {
				likes = append(likes, why)
			}
		}
	}
	if len(out) > 0 {
		parts = append(parts, "leaving out "+phrase(out, 2)+", which you have seen or turned down")
	}
	if len(kept) > 0 {
		parts = append(parts, "keeping away from "+phrase(kept, 3)+", which you told me you dislike")
	}
	if len(likes) > 0 {
		parts = append(parts, "drawing on what I remember of you ("+phrase(likes, 2)+")")
	}
	return strings.Join(parts, "; ")
}

func sameIDs(a, b []scored) bool {
	if len(a) != len(b) {
		return false
	}
	ids := map[string]bool{}
	for _, c := range a {
		ids[c.Title.ID] = true
	}
	for _, c := range b {
		if !ids[c.Title.ID] {
			return false
		}
	}
	return true
}

// used lists the attribute memories that moved the shown titles, for the
// answer's memory.used: the memories behind a like on a shown title, a
// dislike that kept a title out, or a dislike the request asked for.
func (r *ranking) used(taste *Taste) []MemoryItem {
	if taste.Empty() {
		return nil
	}
	var out []MemoryItem
	add := func(it TasteItem) {
		if !slices.ContainsFunc(out, func(m MemoryItem) bool { return m.ID == it.Memory }) {
			out = append(out, MemoryItem{Kind: "attribute", ID: it.Memory, Text: it.Said})
		}
	}
	for _, it := range r.contradicted {
		add(it)
	}
	if sameIDs(r.shown, r.base) {
		return out
	}
	for _, c := range r.base {
		if c.dislike != nil && !slices.ContainsFunc(r.shown, func(o scored) bool { return o.Title.ID == c.Title.ID }) {
			add(*c.dislike)
		}
	}
	for _, c := range r.shown {
		for _, it := range taste.Likes {
			if slices.Contains(c.memory, "you like "+it.label()) {
				add(it)
			}
		}
	}
	return out
}

// secondPerson turns a memory's value, written of the user ("hates
// musicals", "is not a fan of horror"), into words addressed to them
// ("hate musicals", "are not a fan of horror").
func secondPerson(fact string) string {
	words := strings.Fields(fact)
	if len(words) == 0 {
		return fact
	}
	w := strings.ToLower(words[0])
	switch {
	case w == "is":
		words[0] = "are"
	case w == "has":
		words[0] = "have"
	case w == "does":
		words[0] = "do"
	case w == "doesn't":
		words[0] = "don't"
	case w == "was":
		words[0] = "were"
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes"):
		words[0] = words[0][:len(words[0])-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		words[0] = words[0][:len(words[0])-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		words[0] = words[0][:len(words[0])-1]
	}
	return strings.Join(words, " ")
}

// askedFor names what a request asked for against a remembered dislike:
// "them" for a genre or topic, the person's name.
func askedFor(it TasteItem) string {
	if it.Person != "" {
		return it.Person
	}
	return "them"
}
