package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
	"github.com/memento-ai/memento/hygiene"
)

// AttributeMemories reads a user's attribute memories; *sqlite.DB is one.
type AttributeMemories interface {
	Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error)
}

// CurrentMemories is what an AttributeMemories may also do: hand over the
// user's current memories of the given attributes, newest first (ties as
// a store lists them), at most limit, with their ID, Attribute, Value and
// ValidFrom at least, without reading the others. recall.Index does so
// from memory; the engine's agent reads its user's taste that way.
type CurrentMemories interface {
	CurrentMemories(ctx context.Context, s memento.Scope, attributes []string, limit int) ([]memento.Memory, error)
}

// The attributes whose values say what a user likes or cannot stand, and
// so move the ranking. Values of other attributes (where they live, how
// often they watch) are context for the reply, not for the ranking.
var (
	likeAttributes    = []string{"LIKES", "FAVORITE", "GENRE", "CHARACTER_PREFERENCES"}
	dislikeAttributes = []string{"DISLIKES", "AVOID"}
	tasteAttributes   = slices.Concat(likeAttributes, dislikeAttributes)
)

// maxTasteMemories bounds the memories one turn reads for the ranking.
// From CurrentMemories they are the newest of the attributes that rank;
// from a listing, the first in the store's order (semantic values, then
// episodes, by attribute, oldest first), so that a user with more than
// this many memories has the newest episodes left out.
const maxTasteMemories = 1000

// Taste is what a user's attribute memories say about titles, read in code
// (with the deterministic rules of Agent.Rules, never a model call): the
// genres, people and topic words they like or cannot stand, each with the
// memory it came from so a reason can cite it.
type Taste struct {
	Likes    []TasteItem
	Dislikes []TasteItem
}

// TasteItem is one thing a memory says the user likes or dislikes.
type TasteItem struct {
	// Genre, Person or Word: exactly one is set. Word is a topic word
	// matched in a title's plot ("heist", "slasher").
	Genre  string
	Person string
	Word   string
	// Memory is the id of the memory, Said its value ("can't stand
	// slasher films").
	Memory string
	Said   string
}

// Empty reports whether the taste has nothing to rank by.
func (t *Taste) Empty() bool { return t == nil || len(t.Likes)+len(t.Dislikes) == 0 }

// matches reports whether title t has the item's genre, person or word.
func (it TasteItem) matches(t memento.Title, words map[string]bool) bool {
	switch {
	case it.Genre != "":
		return slices.ContainsFunc(t.Genres, func(g string) bool { return strings.EqualFold(g, it.Genre) })
	case it.Person != "":
		return slices.ContainsFunc(t.Cast[:min(len(t.Cast), billedCast)], func(p string) bool { return strings.EqualFold(p, it.Person) })
	case it.Word != "":
		return words[it.Word]
	}
	return false
}

// label names the item for a reason: "heist", "Tom Hanks", "horror".
func (it TasteItem) label() string {
	switch {
	case it.Genre != "":
		return strings.ToLower(it.Genre)
	case it.Person != "":
		return it.Person
	}
	return it.Word
}

// billedCast is how many top-billed cast members a liked person must be
// among for a title to count as theirs.
const billedCast = 5

// tasteReader turns attribute memories into a Taste, caching what each
// memory value says (a value is read once, however many turns use it).
type tasteReader struct {
	mu    sync.Mutex
	cache map[string]memento.Understanding // memory value -> its reading
}

// maxTasteCache bounds the cache of readings; it is emptied when full.
const maxTasteCache = 20_000

// taste reads the user's current attribute memories. Errors: the store's.
func (a *Agent) taste(ctx context.Context, s memento.Scope) (*Taste, error) {
	if a.Attributes == nil || a.Rules == nil {
		return nil, nil
	}
	// Both kinds: a user kept in episodic mode states likes and dislikes
	// as episodes, and they rank as a semantic user's values do. Newest
	// first, so that a later statement about a genre, person or topic
	// ("actually I do like horror now") decides over an earlier one.
	var mems []memento.Memory
	if cm, ok := a.Attributes.(CurrentMemories); ok {
		var err error
		if mems, err = cm.CurrentMemories(ctx, s, tasteAttributes, maxTasteMemories); err != nil {
			return nil, fmt.Errorf("read attribute memories: %w", err)
		}
	} else {
		listed, err := a.Attributes.Memories(ctx, s, memento.MemoryFilter{Limit: maxTasteMemories})
		if err != nil {
			return nil, fmt.Errorf("read attribute memories: %w", err)
		}
		mems = slices.Clone(listed)
		slices.SortStableFunc(mems, func(x, y memento.Memory) int { return y.ValidFrom.Compare(x.ValidFrom) })
	}
	t := &Taste{}
	said := map[string]bool{} // labels a newer memory has spoken of
	for _, m := range mems {
		like := slices.Contains(likeAttributes, strings.ToUpper(m.Attribute))
		dislike := slices.Contains(dislikeAttributes, strings.ToUpper(m.Attribute))
		if !like && !dislike || m.ValidTo != nil || strings.TrimSpace(m.Value) == "" {
			continue
		}
		// A stored value that carries instructions to the model ranks
		// nothing, as it is rendered nowhere.
		if !hygiene.Stored(m.Value) {
			continue
		}
		u, err := a.readValue(ctx, m.Value)
		if err != nil {
			return nil, err
		}
		var labels []string
		add := func(list *[]TasteItem, it TasteItem) {
			it.Memory, it.Said = m.ID, m.Value
			if said[it.label()] {
				return
			}
			labels = append(labels, it.label())
			if !slices.ContainsFunc(*list, func(o TasteItem) bool { return o.label() == it.label() }) {
				*list = append(*list, it)
			}
		}
		target := &t.Likes
		if dislike {
			target = &t.Dislikes
		}
		for _, g := range u.Genres {
			add(target, TasteItem{Genre: g})
		}
		// "likes everything but horror": excluded genres are disliked
		// whatever the attribute.
		for _, g := range u.ExcludeGenres {
			add(&t.Dislikes, TasteItem{Genre: g})
		}
		for _, p := range u.People {
			add(target, TasteItem{Person: p})
		}
		for _, w := range topicWords(u.FreeText) {
			add(target, TasteItem{Word: w})
		}
		for _, l := range labels {
			said[l] = true
		}
	}
	return t, nil
}

// readValue reads one memory value with the agent's rules, as if the user
// had asked for it.
func (a *Agent) readValue(ctx context.Context, value string) (memento.Understanding, error) {
	r := &a.tastes
	r.mu.Lock()
	u, ok := r.cache[value]
	r.mu.Unlock()
	if ok {
		return u, nil
	}
	got, err := a.Rules.UnderstandRequest(ctx, memento.UnderstandInput{Message: value, Context: memento.NewActiveContext()})
	if err != nil {
		return memento.Understanding{}, fmt.Errorf("read memory %q: %w", value, err)
	}
	r.mu.Lock()
	if r.cache == nil || len(r.cache) >= maxTasteCache {
		r.cache = make(map[string]memento.Understanding)
	}
	r.cache[value] = *got
	r.mu.Unlock()
	return *got, nil
}

// topicWords splits a free-text topic into the terms a plot is checked
// for: fulltext's topic terms (folded, stop words left out, stemmed, as the
// catalog indexes plots), without the words of fewer than four letters and
// the generic ones.
func topicWords(text string) []string {
	var out []string
	fulltext.EachWord(text, func(w []byte) {
		if len(w) < minTopicWord || genericWords[string(w)] || fulltext.StopwordBytes(w) {
			return
		}
		if t := fulltext.StemBytes(w); !slices.Contains(out, string(t)) {
			out = append(out, string(t))
		}
	})
	return out
}

// minTopicWord is the length, in bytes, of the shortest word a topic is
// matched by: shorter ones ("war", "spy") name too much.
const minTopicWord = 4

// genericWords say nothing about what a film is about.
var genericWords = map[string]bool{
	"movie": true, "movies": true, "film": true, "films": true, "show": true, "shows": true, "series": true,
	"something": true, "anything": true, "thing": true, "things": true, "really": true, "very": true,
	"watch": true, "watching": true, "good": true, "great": true, "kind": true, "kinds": true, "type": true,
	"stuff": true, "with": true, "about": true, "that": true, "this": true, "them": true, "they": true,
	"loves": true, "likes": true, "love": true, "like": true, "enjoy": true, "enjoys": true, "hate": true,
	"hates": true, "stand": true, "cannot": true, "dislikes": true, "avoid": true, "avoids": true,
}

// plotWords returns the terms of a title's plot and name, as topicWords
// spells them, for matching topic words. It runs for every candidate of a
// turn that has topic words to match, so it keeps the terms in one string
// (one allocation for the text, one for the offsets, and the map) rather
// than one string per word.
func plotWords(t memento.Title) map[string]bool {
	var (
		scratch [1024]byte
		ends    [256]int32
	)
	buf, end := scratch[:0], ends[:0]
	add := func(w []byte) {
		if len(w) >= minTopicWord {
			buf = append(buf, fulltext.StemBytes(w)...)
			end = append(end, int32(len(buf)))
		}
	}
	fulltext.EachWord(t.Title, add)
	fulltext.EachWord(t.Overview, add)
	text := string(buf)
	out := make(map[string]bool, len(end))
	start := int32(0)
	for _, e := range end {
		out[text[start:e]] = true
		start = e
	}
	return out
}
