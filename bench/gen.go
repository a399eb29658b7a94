package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// Vocab is what synthetic users talk about: titles, genres and people of
// the catalog, and the platforms, companions and habits of everyday
// viewing. Drawing from the real catalog gives the full-text indexes and
// the embeddings the word distribution of real use.
type Vocab struct {
	Titles     []string
	TitleIDs   []string
	Genres     []string
	People     []string
	Platforms  []string
	Companions []string
	Moods      []string
}

// NewVocab builds a vocabulary from catalog titles: up to 5,000 titles and
// 2,000 people, spread evenly over the catalog.
func NewVocab(titles []memento.Title, genres []string) *Vocab {
	v := &Vocab{
		Genres:     genres,
		Platforms:  []string{"Netflix", "Prime Video", "Disney+", "Max", "Apple TV+", "Hulu", "Mubi", "the Criterion Channel", "Blu-ray", "the cinema"},
		Companions: []string{"my sister", "my partner", "the kids", "my dad", "friends", "my flatmate", "my mum", "colleagues"},
		Moods:      []string{"slow-burn", "feel-good", "dark", "twisty", "cosy", "epic", "quiet", "funny", "tense", "romantic", "weird", "gritty"},
	}
	step := max(1, len(titles)/5000)
	seen := map[string]bool{}
	for i := 0; i < len(titles); i += step {
		t := titles[i]
		v.Titles = append(v.Titles, t.Title)
		v.TitleIDs = append(v.TitleIDs, t.ID)
		for _, p := range t.Cast {
			if !seen[p] && len(v.People) < 2000 {
				seen[p] = true
				v.People = append(v.People, p)
			}
		}
	}
	if len(v.Titles) == 0 {
		v.Titles, v.TitleIDs = []string{"Arrival", "Heat", "Paddington 2"}, []string{"t1", "t2", "t3"}
	}
	if len(v.Genres) == 0 {
		v.Genres = []string{"Drama", "Comedy", "Thriller", "Science Fiction", "Horror"}
	}
	if len(v.People) == 0 {
		v.People = []string{"Amy Adams", "Al Pacino", "Hugh Grant"}
	}
	return v
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// statement is one thing a user said and what the pipeline learned from it.
type statement struct {
	text      string // the user's message
	reply     string // the assistant's answer
	attribute string // "" when nothing was worth remembering
	mode      string
	value     string
}

// The movie schema's attributes (all semantic by default) and the generic
// schema's episodic attributes, as the pipeline assigns them.
var semanticAttrs = []string{"LIKES", "DISLIKES", "FAVORITE", "WANTS_TO_WATCH", "PLATFORM", "GENRE", "PERSONALITY",
	"WATCHING_HABIT", "FREQUENCY", "AVOID", "CHARACTER_PREFERENCES", "SHOW_LENGTH", "REWATCHER", "POPULARITY"}

// semanticStatement says something about one semantic attribute.
func (v *Vocab) semanticStatement(r *rand.Rand, attr string) statement {
	g, t, p, pl, m := strings.ToLower(pick(r, v.Genres)), pick(r, v.Titles), pick(r, v.People), pick(r, v.Platforms), pick(r, v.Moods)
	s := statement{attribute: attr, mode: memento.ModeSemantic}
	switch attr {
	case "LIKES":
		s.text, s.value = fmt.Sprintf("I really loved %s, %s %s films are my thing.", t, m, g), fmt.Sprintf("loved %s; likes %s %s films", t, m, g)
	case "DISLIKES":
		s.text, s.value = fmt.Sprintf("Honestly I can't stand %s movies, please no more of those.", g), fmt.Sprintf("dislikes %s movies", g)
	case "FAVORITE":
		s.text, s.value = fmt.Sprintf("%s is my favourite actor, I'd watch anything with them.", p), fmt.Sprintf("favourite actor is %s", p)
	case "WANTS_TO_WATCH":
		s.text, s.value = fmt.Sprintf("I still want to watch %s at some point.", t), fmt.Sprintf("wants to watch %s", t)
	case "PLATFORM":
		s.text, s.value = fmt.Sprintf("We mostly watch on %s these days.", pl), fmt.Sprintf("watches on %s", pl)
	case "GENRE":
		s.text, s.value = fmt.Sprintf("Lately I'm mostly into %s.", g), fmt.Sprintf("mostly into %s", g)
	case "PERSONALITY":
		s.text, s.value = fmt.Sprintf("I'm a %s person, I like things %s.", pick(r, []string{"calm", "restless", "curious", "nostalgic"}), m), fmt.Sprintf("likes things %s", m)
	case "WATCHING_HABIT":
		s.text, s.value = fmt.Sprintf("I usually watch something with %s after dinner.", pick(r, v.Companions)), "watches after dinner with company"
	case "FREQUENCY":
		n := 1 + r.IntN(6)
		s.text, s.value = fmt.Sprintf("I watch about %d films a week.", n), fmt.Sprintf("about %d films a week", n)
	case "AVOID":
		s.text, s.value = fmt.Sprintf("Please avoid anything with %s, it upsets me.", pick(r, []string{"animal cruelty", "jump scares", "gore", "spiders", "long torture scenes"})), "avoids distressing content"
	case "CHARACTER_PREFERENCES":
		s.text, s.value = fmt.Sprintf("I love %s heroines and morally grey villains.", pick(r, []string{"witty", "stubborn", "clever", "reluctant"})), "likes strong heroines and grey villains"
	case "SHOW_LENGTH":
		n := 80 + r.IntN(80)
		s.text, s.value = fmt.Sprintf("Nothing over %d minutes on a weeknight please.", n), fmt.Sprintf("prefers films under %d minutes on weeknights", n)
	case "REWATCHER":
		s.text, s.value = fmt.Sprintf("I've rewatched %s at least five times.", t), fmt.Sprintf("rewatches favourites such as %s", t)
	default: // POPULARITY
		s.text, s.value = "I prefer hidden gems over blockbusters.", "prefers hidden gems"
	}
	s.reply = fmt.Sprintf("Noted — I'll keep that in mind next time I suggest %s.", pick(r, []string{"something", "a film", "a series"}))
	return s
}

// episode says something that happened, remembered as an episode.
func (v *Vocab) episode(r *rand.Rand) statement {
	t, c, pl := pick(r, v.Titles), pick(r, v.Companions), pick(r, v.Platforms)
	day := pick(r, []string{"on Saturday", "last night", "on Sunday afternoon", "on my birthday", "during the holidays", "yesterday"})
	switch r.IntN(3) {
	case 0:
		return statement{text: fmt.Sprintf("We watched %s with %s %s, it was great.", t, c, day), attribute: "EVENT", mode: memento.ModeEpisodic,
			value: fmt.Sprintf("watched %s with %s %s", t, c, day), reply: "Lovely! Want more like it?"}
	case 1:
		return statement{text: fmt.Sprintf("I fell asleep halfway through %s on %s %s.", t, pl, day), attribute: "EVENT", mode: memento.ModeEpisodic,
			value: fmt.Sprintf("fell asleep during %s %s", t, day), reply: "Maybe something shorter next time."}
	default:
		return statement{text: fmt.Sprintf("%s made me cry %s, I didn't expect that.", t, day), attribute: "FEELING", mode: memento.ModeEpisodic,
			value: fmt.Sprintf("was moved by %s %s", t, day), reply: "It does hit hard."}
	}
}

// chatter is a turn with nothing worth remembering.
func chatter(r *rand.Rand) statement {
	return statement{text: pick(r, []string{"sounds good", "thanks!", "ok, maybe later", "haha yes", "what else have you got?", "hmm, not sure"}),
		reply: pick(r, []string{"Anytime.", "Here are a few more.", "Sure, just ask."})}
}

// concept is a preference concept the user holds, in normalised form.
func (v *Vocab) concept(r *rand.Rand) (string, int) {
	sign := 1
	if r.IntN(4) == 0 {
		sign = -1
	}
	switch r.IntN(4) {
	case 0:
		return strings.ToLower(pick(r, v.Genres)) + " films", sign
	case 1:
		return pick(r, v.Moods) + " " + strings.ToLower(pick(r, v.Genres)), sign
	case 2:
		return "films with " + pick(r, v.People), sign
	default:
		return pick(r, []string{"long running times", "subtitles", "musicals", "black and white films", "true stories", "twist endings", "sequels", "animation for adults"}), sign
	}
}

// Question returns a query a user might ask the memory about, for context
// assembly.
func (v *Vocab) Question(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return fmt.Sprintf("any %s films like %s?", strings.ToLower(pick(r, v.Genres)), pick(r, v.Titles))
	case 1:
		return fmt.Sprintf("something with %s for tonight", pick(r, v.People))
	case 2:
		return fmt.Sprintf("what should we watch on %s with %s?", pick(r, v.Platforms), pick(r, v.Companions))
	default:
		return fmt.Sprintf("a %s %s film, not too long", pick(r, v.Moods), strings.ToLower(pick(r, v.Genres)))
	}
}

// Request returns a message to the recommendation agent; follow-up says
// whether it continues a thread ("something older", "not those").
func (v *Vocab) Request(r *rand.Rand, followUp bool) string {
	if followUp {
		return pick(r, []string{"Something older.", "Not those, different ones please.", "Movies only.", "Something newer.", fmt.Sprintf("Maybe with %s?", pick(r, v.People))})
	}
	switch r.IntN(3) {
	case 0:
		return fmt.Sprintf("Recommend some %s movies.", strings.ToLower(pick(r, v.Genres)))
	case 1:
		return fmt.Sprintf("I want a %s film from the %d0s.", strings.ToLower(pick(r, v.Genres)), 197+r.IntN(5))
	default:
		return fmt.Sprintf("Something like %s please.", pick(r, v.Titles))
	}
}

// Statement returns a user message for the pipeline: three in four say
// something worth remembering.
func (v *Vocab) Statement(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return chatter(r).text
	case 1:
		return v.episode(r).text
	default:
		return v.semanticStatement(r, pick(r, semanticAttrs)).text
	}
}

// UserData is everything one synthetic user has in the store.
type UserData struct {
	Scope       memento.Scope
	Threads     []ThreadData
	Memories    []memento.Memory
	Runs        []memento.MemoryRun
	Events      []memento.Event
	Preferences []memento.Preference
}

// ThreadData is a thread and its messages; Vectors[i] is the embedding of
// Messages[i] (nil for the assistant's messages, which are not embedded).
type ThreadData struct {
	ID       string
	Updated  time.Time
	Messages []memento.Message
	Vectors  [][]float32
}

// perThread is how many user statements a synthetic thread holds.
const perThread = 20

// GenerateUser builds a user with about memories memories, deterministically
// from seed: for every memory the user message it came from and the
// assistant's reply, a chit-chat exchange for every third memory (which
// the pipeline ran over and found nothing in), a run record for every user
// message, an event for every fourth memory and a preference for every
// tenth. Memories are the movie schema's semantic attributes (each
// current value superseding earlier ones, which are kept with validTo) and,
// for half of what is said after the first values, episodes. Times spread
// over the year before end. Vectors are left for the caller to fill.
func (v *Vocab) GenerateUser(s memento.Scope, memories int, seed uint64, end time.Time) UserData {
	r := rand.New(rand.NewPCG(seed, 0x6d656d656e746f))
	u := UserData{Scope: s}
	// Each statement and its chatter take a slot of time, oldest first.
	slots := memories + memories/3 + 1
	step := 365 * 24 * time.Hour / time.Duration(slots)
	at := end.Add(-365 * 24 * time.Hour)
	var th *ThreadData
	current := map[string]int{} // attribute -> index in u.Memories of its current value
	said := 0
	newThread := func() {
		u.Threads = append(u.Threads, ThreadData{ID: fmt.Sprintf("t%03d", len(u.Threads)+1)})
		th = &u.Threads[len(u.Threads)-1]
	}
	addExchange := func(st statement) string {
		at = at.Add(step)
		seq := int64(len(th.Messages))
		id := fmt.Sprintf("%s-m%d", s.User, said)
		said++
		th.Messages = append(th.Messages,
			memento.Message{ID: id, Thread: th.ID, Seq: seq + 1, Role: memento.RoleUser, Text: st.text, At: at},
			memento.Message{ID: id + "r", Thread: th.ID, Seq: seq + 2, Role: memento.RoleAssistant, Text: st.reply, At: at.Add(2 * time.Second)})
		th.Updated = at.Add(2 * time.Second)
		return id
	}
	for i := 0; i < memories; i++ {
		if i%perThread == 0 {
			newThread()
		}
		var st statement
		if i < len(semanticAttrs) || r.IntN(2) == 0 {
			attr := semanticAttrs[i%len(semanticAttrs)]
			if i >= len(semanticAttrs) {
				attr = pick(r, semanticAttrs)
			}
			st = v.semanticStatement(r, attr)
		} else {
			st = v.episode(r)
		}
		msg := addExchange(st)
		m := memento.Memory{
			ID: fmt.Sprintf("%s-mem%d", s.User, i), Attribute: st.attribute, Mode: st.mode, Value: st.value,
			ValidFrom: at, Sources: []string{msg}, Thread: th.ID, RunID: msg,
		}
		run := memento.MemoryRun{Message: msg, Thread: th.ID, Outcome: memento.RunStored, Memories: []string{m.ID}, FinishedAt: at.Add(time.Second)}
		if st.mode == memento.ModeSemantic {
			if prev, ok := current[st.attribute]; ok {
				to := at
				u.Memories[prev].ValidTo = &to
				run.Superseded = []string{u.Memories[prev].ID}
			}
			current[st.attribute] = len(u.Memories)
		}
		u.Memories = append(u.Memories, m)
		u.Runs = append(u.Runs, run)
		if i%3 == 2 {
			id := addExchange(chatter(r))
			u.Runs = append(u.Runs, memento.MemoryRun{Message: id, Thread: th.ID, Outcome: memento.RunNothing, Reason: "sentinel: nothing worth remembering", FinishedAt: at.Add(time.Second)})
		}
		if i%4 == 3 {
			typ := pick(r, memento.EventTypes)
			var val *float64
			if typ == memento.EventRated {
				x := float64(1+r.IntN(10)) / 2
				val = &x
			}
			u.Events = append(u.Events, memento.Event{ID: fmt.Sprintf("%s-e%d", s.User, i), Type: typ, TitleID: pick(r, v.TitleIDs), Value: val, At: at})
		}
		if i%10 == 9 {
			c, sign := v.concept(r)
			kind := memento.KindTaste
			if r.IntN(5) == 0 {
				kind = memento.KindFact
			}
			u.Preferences = append(u.Preferences, memento.Preference{
				ID: fmt.Sprintf("%s-p%d", s.User, i), Concept: c, Kind: kind, Weight: float64(sign) * (0.3 + 0.7*r.Float64()),
				Evidence: 1 + r.IntN(3), Sources: []string{msg}, FirstSeen: at, LastSeen: at,
			})
		}
	}
	return u
}
