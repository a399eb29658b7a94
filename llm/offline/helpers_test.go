package offline

import (
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// fakePeople is a map-based PersonLookup: lower-cased name to the
// catalog's spelling.
type fakePeople map[string]string

func (f fakePeople) Person(name string) (string, bool) {
	v, ok := f[strings.ToLower(name)]
	return v, ok
}

// testNow is the fixed clock of every test: "recent" means 2020 on.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func newTestModel(tb testing.TB) *Model {
	tb.Helper()
	return New(Options{
		People: fakePeople{
			"tom hanks":         "Tom Hanks",
			"meryl streep":      "Meryl Streep",
			"keanu reeves":      "Keanu Reeves",
			"samuel l. jackson": "Samuel L. Jackson",
			"brad pitt":         "Brad Pitt",
			"julia roberts":     "Julia Roberts",
			"jim carrey":        "Jim Carrey",
			"seth rogen":        "Seth Rogen",
			"jonah hill":        "Jonah Hill",
			"robert de niro":    "Robert De Niro",
		},
		Now: func() time.Time { return testNow },
	})
}

// movieSchema is the movie attribute schema as the pipeline defines it.
var movieSchema = []memento.AttributeSpec{
	{Name: "LIKES", Description: "Things the user likes in titles: actors, directors, topics.", Mode: "semantic"},
	{Name: "DISLIKES", Description: "Things the user dislikes in titles.", Mode: "semantic"},
	{Name: "FAVORITE", Description: "The user's favourite titles, actors or genres.", Mode: "semantic"},
	{Name: "WANTS_TO_WATCH", Description: "Titles the user wants to watch.", Mode: "episodic"},
	{Name: "PLATFORM", Description: "Streaming services and media the user watches on.", Mode: "semantic"},
	{Name: "GENRE", Description: "Genres the user likes.", Mode: "semantic"},
	{Name: "PERSONALITY", Description: "The user's personality as a viewer.", Mode: "semantic"},
	{Name: "WATCHING_HABIT", Description: "When, where and with whom the user watches.", Mode: "semantic"},
	{Name: "FREQUENCY", Description: "How often the user watches.", Mode: "semantic"},
	{Name: "AVOID", Description: "Content the user wants to avoid, such as gore.", Mode: "semantic"},
	{Name: "CHARACTER_PREFERENCES", Description: "Kinds of characters the user likes.", Mode: "semantic"},
	{Name: "SHOW_LENGTH", Description: "Preferred runtime or episode length.", Mode: "semantic"},
	{Name: "REWATCHER", Description: "Whether the user rewatches titles.", Mode: "semantic"},
	{Name: "POPULARITY", Description: "Preference for popular or obscure titles.", Mode: "semantic"},
}

// genericSchema is a general-life schema.
var genericSchema = []memento.AttributeSpec{
	{Name: "LOCATION", Description: "Where the user lives.", Mode: "semantic"},
	{Name: "OCCUPATION", Description: "The user's job or studies.", Mode: "semantic"},
	{Name: "FAMILY", Description: "The user's family members and pets.", Mode: "semantic"},
	{Name: "EVENT", Description: "Things that happened to the user, with dates.", Mode: "episodic"},
	{Name: "HEALTH", Description: "Health conditions, allergies and diet.", Mode: "semantic"},
	{Name: "HOBBY", Description: "The user's hobbies and pastimes.", Mode: "semantic"},
	{Name: "PREFERENCE", Description: "General likes and dislikes.", Mode: "semantic"},
}
