package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/memento-ai/memento"
)

// AssignAttributes gives each fact one attribute of the schema, or "" when
// none fits (the pipeline drops it). Facts are sorted into categories by
// keyword rules, tried from the most specific (a platform, a rewatch
// habit) to the most general (a like or dislike); a category picks the
// schema attribute named as it expects (PLATFORM, LOCATION) or, for an
// unknown schema, one whose name or description shares its keywords. A
// fact no category takes goes to the attribute whose name and description
// share most words with it.
func (m *Model) AssignAttributes(ctx context.Context, facts []memento.Fact, schema []memento.AttributeSpec) ([]memento.AttributedFact, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("assign attributes: %w", err)
	}
	attrs := m.described(schema)
	out := make([]memento.AttributedFact, 0, len(facts))
	for _, f := range facts {
		out = append(out, memento.AttributedFact{Fact: f, Attribute: assign(f, attrs)})
	}
	return out, nil
}

// schemaAttr is a schema attribute with the stems of its name and
// description.
type schemaAttr struct {
	name  string
	upper string
	stems map[string]bool
}

// schemaNoise are description words that say nothing about an attribute.
var schemaNoise = stems("user", "users", "person", "people", "thing", "things", "e.g", "eg",
	"such", "example", "examples", "movie", "movies", "film", "films", "show", "shows", "title",
	"titles", "watch", "watches", "watching", "tv", "value", "values", "etc", "kind", "kinds",
	"type", "types", "prefer", "prefers", "like", "likes", "general", "specific", "particular",
	"any", "other", "about", "their", "they", "what", "which", "how", "whether", "has", "have",
	"is", "are", "the", "a", "an", "of", "or", "and", "to", "in", "on", "for", "with", "by")

// describedSchema is a schema with its description (describeSchema).
type describedSchema struct {
	specs []memento.AttributeSpec
	attrs []schemaAttr
}

// described returns describeSchema(schema), computed again only when the
// schema is not the one of the last call: a pipeline asks with the same
// schema for every message, and describing it (tokenising and stemming
// every description) was a tenth of the attribute step's processor.
// The description is read-only, so calls share it.
func (m *Model) described(schema []memento.AttributeSpec) []schemaAttr {
	if d := m.schema.Load(); d != nil && slices.Equal(d.specs, schema) {
		return d.attrs
	}
	d := &describedSchema{specs: slices.Clone(schema), attrs: describeSchema(schema)}
	m.schema.Store(d)
	return d.attrs
}

func describeSchema(schema []memento.AttributeSpec) []schemaAttr {
	attrs := make([]schemaAttr, 0, len(schema))
	for _, a := range schema {
		if strings.TrimSpace(a.Name) == "" {
			continue
		}
		sa := schemaAttr{name: a.Name, upper: strings.ToUpper(a.Name), stems: map[string]bool{}}
		text := strings.ReplaceAll(a.Name, "_", " ") + " " + a.Description
		for _, t := range tokenize(text) {
			if st := stem(t.w); !stopwords[t.w] && !schemaNoise[st] {
				sa.stems[st] = true
			}
		}
		attrs = append(attrs, sa)
	}
	return attrs
}

// factInfo is a fact read for the rules.
type factInfo struct {
	text     string // lower-cased
	toks     []token
	words    map[string]bool
	stems    map[string]bool
	positive bool
	negative bool
	genre    bool
	// past marks a state that no longer holds: "used to hate horror".
	past bool
}

func readFact(f memento.Fact) factInfo {
	fi := factInfo{text: strings.ToLower(f.Text), toks: tokenize(f.Text), words: map[string]bool{}, stems: map[string]bool{}}
	pos, neg := false, false
	for _, t := range fi.toks {
		fi.words[t.w] = true
		st := stem(t.w)
		if len(t.w) >= 4 {
			// Short words match exactly only: "sky" is not "skiing".
			fi.stems[st] = true
		}
		if positiveWords[st] {
			pos = true
		}
		if negativeWords[st] {
			neg = true
		}
	}
	negated := f.Negated || hasNegation(fi.toks)
	switch {
	case pos && !neg:
		fi.positive, fi.negative = !negated, negated
	case neg && !pos:
		fi.positive, fi.negative = negated, !negated
	case pos && neg:
		fi.negative = true
	}
	switch {
	case hasAnyPhrase(fi.toks, []string{"come around", "came around", "warming up", "can't get enough", "cannot get enough",
		"got into", "gotten into", "getting into", "fell for", "fallen for", "hooked on", "obsessed with"}):
		fi.positive, fi.negative = true, false
	case hasAnyPhrase(fi.toks, []string{"can't stand", "cannot stand", "can not stand", "can't bear", "can't stomach", "can't handle", "cannot handle"}):
		// The "can't" belongs to the verb: no double negation.
		fi.positive, fi.negative = false, true
	}
	// A verdict on what was watched: "watched The Shining, it was boring".
	switch {
	case hasAnyPhrase(fi.toks, negativeVerdictPhrases) && !fi.positive:
		fi.negative = true
	case hasAnyPhrase(fi.toks, positiveVerdictPhrases) && !fi.negative:
		fi.positive = true
	}
	for i := range fi.toks {
		if _, _, ok := fullGenreTable.match(fi.toks, i); ok {
			fi.genre = true
			break
		}
	}
	fi.past = usedTo(fi.toks)
	return fi
}

// usedTo reports a state the user says held once and no longer does:
// "used to hate horror", "didn't use to like westerns". Being used to
// something ("is used to subtitles", "got used to dubbing") is a habit
// that holds now.
func usedTo(toks []token) bool {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i+1].w != "to" || toks[i].w != "used" && toks[i].w != "use" {
			continue
		}
		if i > 0 {
			switch toks[i-1].w {
			case "am", "is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "getting", "gotten", "become", "became":
				continue
			}
		}
		return true
	}
	return false
}

// seenWords say the user has seen or watched a title. They are matched
// as written: "watches" is a habit, "watched" an event.
var seenWords = []string{"has seen", "has already seen", "already seen", "has watched", "has already watched",
	"already watched", "saw", "watched", "has just seen", "just saw", "just watched", "finally watched",
	"finally saw", "has finally seen", "finished watching", "has been watching"}

// seen reports a fact that says the user has seen or watched something
// ("has already seen Heat", "watched Heat last night"), not that they
// have not ("hasn't seen Heat").
func (fi factInfo) seen() bool {
	found := false
	for _, p := range seenWords {
		if (strings.Contains(p, " ") && containsSeq(fi.toks, p)) || fi.words[p] {
			found = true
			break
		}
	}
	return found && !fi.has("hasn't seen", "has never seen", "has not seen", "never saw", "hasn't watched",
		"has never watched", "has not watched", "never watched", "wants to", "didn't watch", "did not watch")
}

// seenCategory is where a seen title goes: an attribute of things the
// user did, when the schema has one. It has no keywords, so a schema
// without such an attribute keeps nothing (the profile's event does).
var seenCategory = category{names: []string{"EVENT", "EVENTS", "EXPERIENCE", "EXPERIENCES", "SEEN", "WATCHED", "HISTORY", "WATCH_HISTORY"}}

// positiveVerdicts and negativeVerdicts judge a title after "was" or
// "is": "it was amazing", "Heat is boring".
var (
	positiveVerdicts = []string{"great", "amazing", "awesome", "fantastic", "excellent", "brilliant", "wonderful",
		"superb", "incredible", "perfect", "beautiful", "stunning", "a masterpiece", "so good", "really good"}
	negativeVerdicts = []string{"boring", "terrible", "awful", "bad", "horrible", "dull", "disappointing",
		"rubbish", "garbage", "overrated", "dreadful", "a waste of time", "too slow", "so bad"}
)

var (
	positiveVerdictPhrases = verdictPhrases(positiveVerdicts)
	negativeVerdictPhrases = verdictPhrases(negativeVerdicts)
)

// verdictPhrases writes each verdict after "was" and "is".
func verdictPhrases(vs []string) []string {
	out := make([]string, 0, 2*len(vs))
	for _, v := range vs {
		out = append(out, "was "+v, "is "+v)
	}
	return out
}

// has reports whether the fact holds any of the phrases.
func (fi factInfo) has(phrases ...string) bool {
	for _, p := range phrases {
		if strings.Contains(p, " ") {
			if containsSeq(fi.toks, p) {
				return true
			}
		} else if fi.words[p] || fi.stems[keywordStem(p)] {
			return true
		}
	}
	return false
}

// keywordStems memoises the stems of the rules' keywords (has is given
// only the phrases written in this package, so it holds a few hundred):
// the rules test every fact against them, and stemming them anew each
// time took three quarters of has.
var keywordStems sync.Map // string -> string

func keywordStem(w string) string {
	if st, ok := keywordStems.Load(w); ok {
		return st.(string)
	}
	st := stem(w)
	keywordStems.Store(w, st)
	return st
}

// category is one kind of fact: the schema names it expects, the keywords
// that mark an unknown schema's attribute as it, and the rule that
// recognises its facts.
type category struct {
	names []string
	keys  map[string]bool
	test  func(fi factInfo) bool
}

// platforms are where people watch.
var platformWords = []string{"netflix", "hulu", "prime video", "amazon prime", "prime", "amazon",
	"disney", "disney plus", "hbo", "apple tv", "peacock", "paramount", "youtube", "crunchyroll",
	"mubi", "criterion", "tubi", "plex", "dvd", "dvds", "blu ray", "bluray", "streaming",
	"stream", "streams", "subscription", "subscribes", "subscribed", "cable", "on demand",
	"itunes", "vudu", "showtime", "starz", "britbox", "kanopy", "fubo", "sling", "roku",
	"firestick", "max"}

var avoidContent = []string{"gore", "gory", "blood", "bloody", "violence", "violent",
	"jump scares", "jumpscares", "jump scare", "sex", "sexual", "nudity", "nude", "explicit",
	"swearing", "profanity", "animal deaths", "animals die", "sad endings", "sad ending",
	"too scary", "too sad", "spiders", "needles", "graphic", "disturbing", "triggering",
	"trigger", "torture", "suicide", "abuse", "cruelty", "flashing lights", "nightmares"}

var professions = []string{"nurse", "teacher", "engineer", "doctor", "developer", "programmer",
	"student", "lawyer", "designer", "writer", "chef", "cook", "manager", "accountant", "artist",
	"scientist", "researcher", "firefighter", "officer", "pilot", "driver", "farmer",
	"musician", "actor", "actress", "journalist", "editor", "pharmacist", "dentist",
	"architect", "electrician", "plumber", "carpenter", "mechanic", "consultant", "analyst",
	"professor", "librarian", "cashier", "waiter", "waitress", "barista", "bartender",
	"salesman", "salesperson", "secretary", "surgeon", "therapist", "psychologist", "paramedic",
	"soldier", "veteran", "freelancer", "entrepreneur", "retired", "retiree", "intern",
	"nanny", "babysitter", "photographer", "translator", "vet", "veterinarian", "clerk"}

var hobbyWords = []string{"hobby", "hobbies", "running", "runs", "run", "hiking", "hike", "hikes",
	"reading", "reads", "painting", "paints", "guitar", "piano", "violin", "drums", "gardening",
	"cooking", "cooks", "photography", "knitting", "climbing", "cycling", "bikes", "swimming",
	"swims", "yoga", "chess", "gaming", "video games", "board games", "surfing", "skiing",
	"baking", "bakes", "fishing", "camping", "crochet", "sewing", "woodworking", "pottery",
	"plays", "collects", "collecting", "sings", "singing", "dances", "writes", "drawing",
	"draws", "meditation", "meditates", "jogging", "jogs", "tennis", "golf", "football",
	"soccer", "basketball", "volunteers", "volunteering"}

var categories = []category{
	{ // rewatching
		names: []string{"REWATCHER"},
		keys:  stems("rewatch", "rewatcher", "rewatching", "again", "repeat"),
		test: func(fi factInfo) bool {
			return fi.has("rewatch", "rewatches", "rewatched", "rewatching", "rewatcher", "re watch",
				"re watches", "watch again", "watches again", "over and over", "again and again",
				"multiple times", "million times", "many times", "times a year", "every year")
		},
	},
	{ // streaming platforms
		names: []string{"PLATFORM", "PLATFORMS", "SERVICE", "SERVICES", "STREAMING"},
		keys:  stems("platform", "platforms", "service", "services", "streaming", "subscription", "netflix"),
		test:  func(fi factInfo) bool { return fi.has(platformWords...) },
	},
	{ // episode and title length
		names: []string{"SHOW_LENGTH", "LENGTH", "RUNTIME", "DURATION"},
		keys:  stems("length", "runtime", "duration", "long", "short", "minutes", "episode"),
		test: func(fi factInfo) bool {
			if fi.has("runtime", "minutes", "minute", "miniseries", "limited series", "bite sized", "hour long", "under an hour", "two hours", "three hours", "episode length") {
				return true
			}
			return fi.has("short", "long", "longer", "shorter", "length", "lengthy") &&
				fi.has("episode", "episodes", "movie", "movies", "film", "films", "show", "shows", "series", "seasons", "season")
		},
	},
	{ // how often
		names: []string{"FREQUENCY", "HOW_OFTEN"},
		keys:  stems("frequency", "often", "how often", "times"),
		test: func(fi factInfo) bool {
			return fi.has("every day", "every night", "every evening", "every week", "every weekend",
				"daily", "weekly", "nightly", "monthly", "once a week", "twice a week", "times a week",
				"times a month", "once a month", "a week", "a month", "per week", "per month", "most nights",
				"rarely", "seldom", "often", "frequently", "hardly ever", "once in a while", "all the time",
				"every other", "every single")
		},
	},
	{ // when, where and how someone watches
		names: []string{"WATCHING_HABIT", "WATCHING_HABITS", "HABIT", "HABITS", "ROUTINE"},
		keys:  stems("habit", "habits", "routine", "when", "where", "how"),
		test: func(fi factInfo) bool {
			return fi.has("weekend", "weekends", "evening", "evenings", "at night", "nights", "night",
				"before bed", "bedtime", "morning", "mornings", "binge", "binges", "binged", "binge watches",
				"alone", "couch", "commute", "train", "phone", "laptop", "tablet", "subtitles", "dubbed",
				"theater", "theatre", "cinema", "cinemas", "falls asleep", "background", "lunch", "dinner",
				"while", "fridays", "saturdays", "sundays", "mondays", "friday", "saturday", "sunday",
				"with their", "with family", "with friends", "on the big screen", "projector", "headphones") &&
				!fi.has("movies with their", "films with their", "shows with their", "night owl", "early bird")
		},
	},
	{ // favourites
		names: []string{"FAVORITE", "FAVOURITE", "FAVORITES", "FAVOURITES"},
		keys:  stems("favorite", "favourite", "favorites", "favourites", "best"),
		test: func(fi factInfo) bool {
			return fi.has("favourite", "favorite", "favourites", "favorites", "fave", "fav", "all time", "best movie ever", "number one")
		},
	},
	wantsCategory,
	{ // things to steer clear of
		names: []string{"AVOID", "AVOIDS", "TRIGGERS", "CONTENT_WARNINGS"},
		keys:  stems("avoid", "avoids", "trigger", "triggers", "warning", "warnings", "steer", "sensitive"),
		test: func(fi factInfo) bool {
			if fi.has("avoid", "avoids", "stays away", "steers clear", "steer clear", "can't handle", "cannot handle", "can't watch", "won't watch", "never watches",
				"rather not see", "rather not watch", "would rather avoid", "doesn't want to see", "does not want to see", "can't deal with") {
				return true
			}
			return (fi.negative || fi.has("no", "without")) && fi.has(avoidContent...)
		},
	},
	{ // characters
		names: []string{"CHARACTER_PREFERENCES", "CHARACTERS", "CHARACTER"},
		keys:  stems("character", "characters", "protagonist", "protagonists", "hero", "heroes", "lead"),
		test: func(fi factInfo) bool {
			return fi.has("character", "characters", "protagonist", "protagonists", "lead", "leads",
				"heroine", "heroines", "hero", "heroes", "villain", "villains", "anti hero", "antihero",
				"antiheroes", "ensemble", "female lead", "strong women", "female characters", "relatable")
		},
	},
	{ // popularity
		names: []string{"POPULARITY", "POPULAR"},
		keys:  stems("popularity", "popular", "mainstream", "obscure", "acclaim"),
		test: func(fi factInfo) bool {
			return fi.has("popular", "mainstream", "blockbuster", "blockbusters", "hidden gems", "gems",
				"obscure", "underrated", "overrated", "cult", "lesser known", "well known", "critically acclaimed",
				"acclaimed", "award winning", "awards", "oscar", "oscars", "trending", "hits", "hyped",
				"top rated", "highly rated", "niche", "arthouse", "art house")
		},
	},
	{ // personality
		names: []string{"PERSONALITY", "TRAITS", "TEMPERAMENT"},
		keys:  stems("personality", "trait", "traits", "temperament", "character"),
		test: func(fi factInfo) bool {
			return fi.has("person", "introvert", "introverted", "extrovert", "extroverted", "shy", "nerd",
				"geek", "sentimental", "emotional", "cries easily", "scared easily", "scares easily",
				"optimist", "pessimist", "anxious", "night owl", "early bird", "easily bored", "easily scared", "easily frightened", "gets scared",
				"impatient", "personality", "romantic at heart", "softie", "sensitive", "cynical",
				"jumpy", "squeamish")
		},
	},
	{ // where the user lives
		names: []string{"LOCATION", "HOME", "RESIDENCE", "CITY", "PLACE", "ADDRESS", "HOMETOWN"},
		keys:  stems("location", "live", "lives", "city", "country", "residence", "home", "address", "where"),
		test: func(fi factInfo) bool {
			return fi.has("lives", "live", "lived", "living in", "moved", "moving", "relocated", "relocating",
				"is from", "comes from", "grew up", "based in", "hometown", "born in", "resides", "neighbourhood",
				"neighborhood")
		},
	},
	{ // work and study
		names: []string{"OCCUPATION", "JOB", "WORK", "CAREER", "PROFESSION", "EMPLOYMENT", "EDUCATION"},
		keys:  stems("occupation", "job", "work", "career", "profession", "employment", "employer", "study"),
		test: func(fi factInfo) bool {
			if fi.has("works", "work", "worked", "job", "career", "profession", "employed", "unemployed",
				"retired", "studies", "studying", "student", "intern", "freelance", "boss", "colleague",
				"colleagues", "office", "shift", "shifts", "teaches", "graduated from", "majoring") {
				return true
			}
			return fi.has("is a", "is an", "works as") && fi.has(professions...)
		},
	},
	{ // pets
		names: []string{"PET", "PETS", "ANIMALS"},
		keys:  stems("pet", "pets", "animal", "animals", "dog", "cat"),
		test: func(fi factInfo) bool {
			return fi.has("dog", "dogs", "cat", "cats", "puppy", "kitten", "pet", "pets", "parrot", "hamster", "rabbit")
		},
	},
	{ // family
		names: []string{"FAMILY", "RELATIONSHIP", "RELATIONSHIPS", "HOUSEHOLD", "RELATIVES", "PEOPLE", "PET", "PETS"},
		keys:  stems("family", "relationship", "relationships", "household", "relative", "relatives", "children", "partner", "spouse"),
		test: func(fi factInfo) bool {
			for w := range familyNouns {
				if fi.words[w] {
					return true
				}
			}
			return fi.has("married", "divorced", "engaged", "single", "widowed", "pregnant", "expecting")
		},
	},
	{ // health and diet
		names: []string{"HEALTH", "MEDICAL", "DIET", "WELLBEING", "DIETARY"},
		keys:  stems("health", "medical", "diet", "dietary", "allergy", "allergies", "condition", "wellbeing"),
		test: func(fi factInfo) bool {
			return fi.has("allergic", "allergy", "allergies", "diet", "vegetarian", "vegan", "gluten",
				"diabetes", "diabetic", "injury", "injured", "sick", "ill", "illness", "medication",
				"asthma", "surgery", "insomnia", "anxiety", "therapy", "migraine", "migraines", "health",
				"lactose", "celiac", "disability", "blind", "deaf", "hearing", "eyesight", "broke")
		},
	},
	{ // hobbies
		names: []string{"HOBBY", "HOBBIES", "INTEREST", "INTERESTS", "ACTIVITY", "ACTIVITIES", "PASTIME"},
		keys:  stems("hobby", "hobbies", "interest", "interests", "activity", "activities", "pastime", "free time"),
		test:  func(fi factInfo) bool { return fi.has(hobbyWords...) && !fi.genre },
	},
	{ // events and plans
		names: []string{"EVENT", "EVENTS", "MILESTONE", "MILESTONES", "PLAN", "PLANS", "EXPERIENCE", "EXPERIENCES"},
		keys:  stems("event", "events", "milestone", "milestones", "plan", "plans", "happened", "trip", "occasion"),
		test: func(fi factInfo) bool {
			if fi.has("went", "visited", "travelled", "traveled", "trip", "vacation", "holiday",
				"graduated", "birthday", "wedding", "anniversary", "yesterday", "last week", "last month",
				"last year", "next week", "next month", "next year", "attended", "adopted", "got married",
				"got engaged", "had a baby", "finished", "bought", "concert", "party",
				"is going to", "will", "tomorrow", "tonight", "this weekend") {
				return true
			}
			// Starting something is an event, but starting to love a
			// genre is a taste, and so is one held "recently": "has
			// started to love westerns", "has gotten into documentaries
			// recently".
			return fi.has("started", "starting", "began", "begun", "recently") && !fi.positive && !fi.negative
		},
	},
	{ // a genre taste
		names: []string{"GENRE", "GENRES"},
		keys:  stems("genre", "genres"),
		test:  func(fi factInfo) bool { return fi.genre && fi.positive },
	},
	{ // likes
		names: []string{"LIKES", "LIKE", "PREFERENCE", "PREFERENCES", "TASTE", "TASTES", "LOVES"},
		keys:  stems("likes", "like", "love", "loves", "enjoy", "enjoys", "preference", "preferences", "taste"),
		test:  func(fi factInfo) bool { return fi.positive },
	},
	{ // dislikes
		names: []string{"DISLIKES", "DISLIKE", "AVOID", "PREFERENCE", "PREFERENCES", "TASTE", "TASTES", "GENRE"},
		keys:  stems("dislikes", "dislike", "hate", "hates", "avoid", "negative"),
		test:  func(fi factInfo) bool { return fi.negative },
	},
}

// wantsCategory is the category of wishes to watch, which the rules on
// seen and unseen titles consult too.
var wantsCategory = category{
	names: []string{"WANTS_TO_WATCH", "WATCHLIST", "WISHLIST", "WANTS"},
	keys:  stems("want", "wants", "watchlist", "wishlist", "plan", "plans", "intend"),
	test: func(fi factInfo) bool {
		// Not having seen a title is a wish only with a word of
		// intent: "still hasn't seen Casablanca", "hasn't seen it yet".
		if fi.has("hasn't seen", "has never seen", "has not seen", "hasn't watched", "has not watched") &&
			fi.has("yet", "still", "should", "plan", "plans", "want", "wants", "list", "someday", "eventually", "meaning") {
			return true
		}
		return fi.has("wants to watch", "wants to see", "plans to watch", "plans to see", "watchlist",
			"watch list", "meaning to watch",
			"meaning to see", "looking forward", "dying to see", "would love to see",
			"would love to watch", "would like to see", "would like to watch", "on their list",
			"hopes to watch", "wants to catch", "wants to finally", "wants to check out")
	},
}

// assign picks the attribute of one fact.
func assign(f memento.Fact, attrs []schemaAttr) string {
	if len(attrs) == 0 {
		return ""
	}
	fi := readFact(f)
	// "Has already seen Heat" is an action, not a taste or a wish: the
	// profile records it as a watched event (and the agent keeps the
	// title out of later answers). It is remembered as something the
	// user did where the schema has such an attribute (EVENT), and never
	// as something they want to watch; a stance ("saw Heat and loved
	// it") or a habit ("has seen it ten times") is filed as that.
	if fi.seen() && !fi.positive && !fi.negative && !categories[0].test(fi) {
		return seenCategory.pick(attrs)
	}
	// A taste that held once and no longer does is history, not a taste
	// to rank by: "used to hate horror".
	if fi.past {
		for _, c := range categories {
			if slices.Contains(c.names, "EVENT") {
				return c.pick(attrs)
			}
		}
	}
	// Not having seen a title, without a wish to, is nothing to remember:
	// "No, never" to "Have you seen The Matrix?".
	if fi.has("hasn't seen", "has never seen", "has not seen", "never saw", "hasn't watched", "has never watched", "has not watched") &&
		!fi.positive && !fi.negative && !wantsCategory.test(fi) {
		return ""
	}
	for _, c := range categories {
		if !c.test(fi) {
			continue
		}
		if name := c.pick(attrs); name != "" {
			return name
		}
	}
	return bestOverlap(fi, attrs)
}

// pick returns the schema attribute a category maps to: by name first,
// then by keywords in an attribute's name or description.
func (c category) pick(attrs []schemaAttr) string {
	for _, n := range c.names {
		for _, a := range attrs {
			if a.upper == n {
				return a.name
			}
		}
	}
	best, bestScore := "", 0
	for _, a := range attrs {
		score := 0
		for k := range c.keys {
			if a.stems[k] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = a.name, score
		}
	}
	return best
}

// bestOverlap returns the attribute sharing most topic words with the
// fact, or "" when none shares any.
func bestOverlap(fi factInfo, attrs []schemaAttr) string {
	topic := topicStems(fi.text)
	best, bestScore := "", 0
	for _, a := range attrs {
		score := 0
		for w := range topic {
			if a.stems[w] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = a.name, score
		}
	}
	return best
}
