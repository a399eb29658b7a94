package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// Limits of the candidate pool of a turn: the CandidatePool titles that
// best match the constraints (most notable first, exclusions applied by
// the catalog while paging), read in pages of at least PageSize titles and
// at most MaxPages pages, so what the memory knows about the user can pick
// from a real choice while a turn ranks a bounded number of titles.
const (
	PageSize      = 12
	CandidatePool = 200
	MaxPages      = 50
)

// Model is what the agent asks of a language model.
type Model interface {
	memento.RequestUnderstander
	memento.ReplyWriter
}

// Scorer is one signal of the ranking: it reads what the memory knows about
// a user (profile, preferences) in code, deterministically, and scores each
// candidate. The agent adds the scores of all its scorers to a small prior
// for the catalog's own order.
type Scorer interface {
	// Score returns one Signal per candidate, in the candidates' order.
	Score(ctx context.Context, s memento.Scope, ac memento.ActiveContext, candidates []memento.Title) ([]Signal, error)
}

// Signal is a scorer's verdict on one candidate.
type Signal struct {
	Score float64
	// Why names what moved the score, such as "you like heist films".
	Why []string
	// Drop removes the title: the user must not see it again (already
	// seen, turned down).
	Drop bool
}

// Ranked is a title with its ranking score and reasons.
type Ranked struct {
	Title memento.Title
	Score float64
	Why   []string
}

// Agent runs turns of the recommendation agent.
type Agent struct {
	Catalog memento.Catalog
	Threads memento.ThreadService
	Model   Model
	// Scorers rank the candidates; without any they keep the catalog's
	// order.
	Scorers []Scorer
	// Fallback writes the reply when the model's reply names a title the
	// answer does not show (a grounding failure); the offline writer never
	// does.
	Fallback memento.ReplyWriter
	// Memory, when set, adds long-term memory to the turn's context and
	// to its answer.
	Memory MemoryReader
	// Jobs returns the background jobs of a stored turn. Nil enqueues the
	// summary job only (DefaultJobs).
	Jobs   func(s memento.Scope, thread string, stored []memento.Message) []memento.JobRequest
	Clock  memento.Clock
	Logger *slog.Logger

	// Resolve finds the catalog title a user names ("something like
	// Heat"); catalog.Index.ResolveTitle is one. Nil: only titles the
	// previous answer showed can be named.
	Resolve func(text string) (*memento.Title, bool)
	// Similar scores likeness to anchor titles and to moods; nil falls
	// back to shared genres, and moods are not applied.
	Similar Similarity
	// Attributes and Rules bring the user's attribute memories (likes,
	// dislikes, things to avoid) into the ranking: Rules reads each value
	// in code, deterministically (the offline model), never with a model
	// call on the turn's path. Either nil leaves them out.
	Attributes AttributeMemories
	Rules      memento.RequestUnderstander
	// EventJobs returns the jobs of the events a turn records (titles
	// seen or turned down), such as relearning the profile. Nil: none.
	EventJobs func(s memento.Scope) func(memento.Event) []memento.JobRequest

	// Emotion tags the user's message with the emotion it expresses; the
	// tag is stored on the message and, on a repeated rejection said in
	// frustration, makes the reply own the misses and offer to widen the
	// search. Nil tags nothing.
	Emotion memento.EmotionClassifier

	// ForgetShown, for baselines, keeps only the last answer's titles
	// after fresh ones, not every title the thread showed.
	ForgetShown bool

	tastes tasteReader

	// Slots, when set, bounds how many turns compute at once; the others
	// wait for a slot in the order they came (slots.go). Nil: no bound.
	Slots *Slots

	// threads serialises the turns of one thread in this process; the
	// store's version check (memento.Turn.CheckSeq) catches turns of
	// other processes.
	threads threadLocks
}

// MemoryReader brings long-term memory into a turn.
type MemoryReader interface {
	// Recall returns the memories relevant to message, rendered for a
	// prompt, and what was used.
	Recall(ctx context.Context, s memento.Scope, thread, message string) ([]MemoryItem, error)
}

// MemoryItem is one memory a turn used.
type MemoryItem struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Request is one user message to the agent.
type Request struct {
	User    string `json:"user"`
	Thread  string `json:"thread"`
	Message string `json:"message"`
}

// TitleResult is a title as an answer shows it.
type TitleResult struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Type     string   `json:"type"`
	Year     int      `json:"year"`
	Genres   []string `json:"genres"`
	Overview string   `json:"overview,omitempty"`
	Why      []string `json:"why"`
}

// MemoryUsed says what memory an answer drew on.
type MemoryUsed struct {
	Summary string       `json:"summary"`
	Used    []MemoryItem `json:"used"`
}

// Response is the agent's answer. Its JSON shape is a contract shared by
// POST /v1/chat, `memento chat` and `memento replay`.
type Response struct {
	User          string                `json:"user"`
	Thread        string                `json:"thread"`
	Reply         string                `json:"reply"`
	Titles        []TitleResult         `json:"titles"`
	ActiveContext memento.ActiveContext `json:"activeContext"`
	Notes         []string              `json:"notes"`
	Searched      bool                  `json:"searched"`
	Memory        MemoryUsed            `json:"memory"`
	// Emotion is what the user's message expressed, as stored on it;
	// absent when the agent tags no emotions.
	Emotion *memento.Emotion `json:"emotion,omitempty"`
}

// DefaultJobs enqueues the rolling summary of the turn.
func DefaultJobs(s memento.Scope, thread string, stored []memento.Message) []memento.JobRequest {
	if len(stored) == 0 {
		return nil
	}
	last := stored[len(stored)-1]
	return []memento.JobRequest{{Kind: memento.JobSummarise, Payload: memento.MessageJob{
		Tenant: s.Tenant, User: s.User, Thread: thread, Message: last.ID, Seq: last.Seq,
	}}}
}

// Turn answers one message and stores the turn. The reply is returned as
// soon as the turn is durable; summaries and other background work follow.
//
// Turns of one thread run one at a time, each from the state the previous
// one left: in this process they wait for each other, across processes
// for the store's thread lock when it has one (memento.ThreadLocker), and
// a turn that another process overtook (the store refuses its save with ECONFLICT) is
// computed again from the new state, up to MaxTurnAttempts times. With
// Slots set, a turn whose thread is its own then waits for a slot; a
// context that ends while it waits ends the turn, and nothing is stored.
func (a *Agent) Turn(ctx context.Context, tenant string, req Request) (*Response, error) {
	if err := validate(req); err != nil {
		return nil, err
	}
	s := memento.Scope{Tenant: tenant, User: req.User}
	unlock, err := a.threads.lock(ctx, threadKey{s, req.Thread})
	if err != nil {
		return nil, err
	}
	defer unlock()
	// Across processes, a store that several servers share holds the
	// thread too, so their turns take it in turn rather than race.
	if tl, ok := a.Threads.(memento.ThreadLocker); ok {
		unlockStore, err := tl.LockThread(ctx, s, req.Thread)
		if err != nil {
			return nil, err
		}
		defer unlockStore()
	}
	give, err := a.Slots.take(ctx)
	if err != nil {
		return nil, err
	}
	defer give()
	for attempt := 1; ; attempt++ {
		resp, err := a.turn(ctx, s, req)
		if memento.ErrorCode(err) != memento.ECONFLICT || attempt == MaxTurnAttempts || ctx.Err() != nil {
			return resp, err
		}
		a.logger().InfoContext(ctx, "thread moved on during the turn; running it again", "user", req.User, "thread", req.Thread, "attempt", attempt)
	}
}

// MaxTurnAttempts bounds how often a turn overtaken by another process's
// turn on the same thread is computed again.
const MaxTurnAttempts = 5

// turn computes one answer from the thread's current state and saves it
// on the condition that the thread has not moved on meanwhile.
func (a *Agent) turn(ctx context.Context, s memento.Scope, req Request) (*Response, error) {
	// Components the turn calls (a model provider that fell back to the
	// offline rules, say) leave notes for the person in ctx.
	ctx = memento.WithNotes(ctx)
	now := a.now()
	state, err := a.Threads.ThreadState(ctx, s, req.Thread)
	if err != nil {
		return nil, fmt.Errorf("load thread %s: %w", req.Thread, err)
	}
	resp := &Response{User: req.User, Thread: req.Thread, Titles: []TitleResult{}, Notes: []string{}, Memory: MemoryUsed{Used: []MemoryItem{}}}
	summary, err := a.Threads.LatestSummary(ctx, s, req.Thread)
	if err != nil {
		return nil, fmt.Errorf("load summary of %s: %w", req.Thread, err)
	}
	// Stored text goes into the prompt only when it carries no
	// instructions to the model (recalled memories are screened by the
	// recaller; the summary and the stored free text are read here).
	if summary != nil && !hygiene.Stored(summary.Text) {
		a.logger().WarnContext(ctx, "thread summary carries instructions to the model; leaving it out", "user", req.User, "thread", req.Thread, "summary", summary.ID)
		summary = nil
	}
	if state.Context.FreeText != "" && !hygiene.Stored(state.Context.FreeText) {
		state.Context.FreeText = ""
	}
	if summary != nil {
		resp.Memory.Summary = summary.Text
		resp.Memory.Used = append(resp.Memory.Used, MemoryItem{Kind: "summary", ID: fmt.Sprint(summary.ID), Text: summary.Text})
	}
	var memories []string
	if a.Memory != nil {
		items, err := a.Memory.Recall(ctx, s, req.Thread, req.Message)
		if err != nil {
			a.logger().WarnContext(ctx, "recall failed; answering without long-term memory", "user", req.User, "err", err)
		}
		for _, it := range items {
			memories = append(memories, it.Text)
			// The answer lists what was used, not all of it: a recalled
			// message can be a whole earlier reply.
			it.Text = clip(it.Text, maxUsedText)
			resp.Memory.Used = append(resp.Memory.Used, it)
		}
	}
	shown := a.titles(ctx, state.LastShown)

	u, err := a.Model.UnderstandRequest(ctx, memento.UnderstandInput{
		Message: req.Message, Context: state.Context, Summary: resp.Memory.Summary, LastShown: shown,
	})
	if err != nil {
		return nil, fmt.Errorf("understand message: %w", err)
	}
	if keepsRequest(u, state.Context) {
		// Read as a follow-up that changes nothing: the constraints stay,
		// titles shown before go after fresh ones, and the note says why
		// the answer did not ask the user to start over.
		c := *u
		c.Search = true
		u = &c
		resp.Notes = append(resp.Notes, "I did not read a change in that message, so I kept to your request for "+Describe(state.Context)+".")
	}
	next := Apply(state.Context, *u, shown, now.Year())
	if a.Emotion != nil {
		// The tag is read in code by the offline rules unless configured
		// otherwise; a classifier's failure leaves the message untagged
		// rather than failing the turn.
		if e, err := a.Emotion.ClassifyEmotion(ctx, req.Message); err != nil {
			a.logger().WarnContext(ctx, "emotion of the message could not be tagged", "user", req.User, "err", err)
		} else {
			resp.Emotion = e
		}
	}
	upset := frustrated(u, state.Context, resp.Emotion)
	var widenBy []string
	if upset {
		widenBy = widen(next)
	}
	seq := state.LastSeq + 1
	events := a.refEvents(u, shown, req.Thread, seq, now, &next, resp)
	if u.Count > memento.MaxCount {
		resp.Notes = append(resp.Notes, fmt.Sprintf("You asked for %d titles; I show at most %d at a time.", u.Count, memento.MaxCount))
		next.Count = memento.MaxCount
	}
	if u.Search && u.Replace {
		if gone := dropped(state.Context, next); len(gone) > 0 {
			resp.Notes = append(resp.Notes, "This is a new request, so I set aside what the earlier one asked for: "+phrase(gone, 4)+".")
		}
	}
	for _, c := range next.Corrections {
		resp.Notes = append(resp.Notes, fmt.Sprintf("I read %q as %s.", c.From, c.To))
	}
	resp.ActiveContext = next
	lastShown := state.LastShown

	var about *memento.Title
	var effect string
	switch {
	case len(u.About) > 0:
		found, missing := a.resolve(u.About, shown)
		for _, m := range missing {
			resp.Notes = append(resp.Notes, fmt.Sprintf("I could not find %s, so I cannot tell you about it.", quoteName(m)))
		}
		if len(found) > 0 {
			about = &found[0]
			resp.Titles = append(resp.Titles, result(Ranked{Title: *about, Why: []string{"you asked about it"}}))
		}
	case !u.Recognised && !u.Search:
		resp.Notes = append(resp.Notes, "I did not recognise a request in that message, so I did not search.")
	case u.Search:
		resp.Searched = true
		taste, err := a.taste(ctx, s)
		if err != nil {
			a.logger().WarnContext(ctx, "attribute memories cannot be read; ranking without them", "user", req.User, "err", err)
			taste = nil
		}
		shown := shownBefore(state)
		if a.ForgetShown {
			shown = state.LastShown
		}
		found, err := a.find(ctx, s, next, shown, taste)
		if err != nil {
			a.logger().ErrorContext(ctx, "catalog search failed", "user", req.User, "thread", req.Thread, "err", err)
			resp.Notes = append(resp.Notes, "The catalog search failed, so I have no titles to show this time: "+memento.ErrorMessage(err))
			found = &ranking{}
		} else if len(found.shown) == 0 {
			resp.Notes = append(resp.Notes, "No titles match "+Describe(next)+".")
		} else if len(found.shown) < next.Count {
			n := len(found.shown)
			resp.Notes = append(resp.Notes, fmt.Sprintf("Only %d title%s match%s %s, fewer than the %d you asked for.",
				n, plural(n), verbS(n), Describe(next), next.Count))
		}
		resp.Notes = append(resp.Notes, found.notes...)
		effect = found.effect()
		for _, it := range found.used(taste) {
			it.Text = clip(it.Text, maxUsedText)
			resp.Memory.Used = append(resp.Memory.Used, it)
		}
		lastShown = make([]string, 0, len(found.shown))
		for _, r := range found.shown {
			resp.Titles = append(resp.Titles, result(r.ranked()))
			lastShown = append(lastShown, r.Title.ID)
		}
	}

	titles := make([]memento.Title, len(resp.Titles))
	for i, r := range resp.Titles {
		titles[i] = memento.Title{ID: r.ID, Title: r.Title, Type: r.Type, Year: r.Year, Genres: r.Genres, Overview: r.Overview}
	}
	if about != nil {
		titles[0] = *about
	}
	reply, err := a.Model.WriteReply(ctx, memento.ReplyInput{
		Message: req.Message, Context: next, Searched: resp.Searched, Titles: titles, Notes: resp.Notes,
		Summary: resp.Memory.Summary, Memories: memories, Question: u.Question, About: about, MemoryEffect: effect,
		Frustrated: upset, Widen: widenBy,
	})
	if err != nil {
		return nil, fmt.Errorf("write reply: %w", err)
	}
	if bad := a.ungrounded(ctx, reply, titles, next, state.LastShown); bad != "" && a.Fallback != nil {
		a.logger().WarnContext(ctx, "reply named a title it did not show; using the fallback writer", "title", bad)
		if reply, err = a.Fallback.WriteReply(ctx, memento.ReplyInput{
			Message: req.Message, Context: next, Searched: resp.Searched, Titles: titles, Notes: resp.Notes, Question: u.Question,
			About: about, MemoryEffect: effect, Frustrated: upset, Widen: widenBy,
		}); err != nil {
			return nil, fmt.Errorf("write reply: %w", err)
		}
	}
	resp.Reply = reply
	resp.Notes = append(resp.Notes, memento.Notes(ctx)...)
	answer, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encode the answer: %w", err)
	}
	var eventJobs func(memento.Event) []memento.JobRequest
	if a.EventJobs != nil && len(events) > 0 {
		eventJobs = a.EventJobs(s)
	}

	jobs := a.Jobs
	if jobs == nil {
		jobs = DefaultJobs
	}
	_, err = a.Threads.SaveTurn(ctx, memento.Turn{
		Scope:  s,
		Thread: req.Thread,
		// Ids follow the thread's sequence, so a replayed conversation
		// gets the same ids every run and memory can cite them.
		Messages: []memento.Message{
			{ID: fmt.Sprintf("turn:%s#%d", req.Thread, state.LastSeq+1), Role: memento.RoleUser, Text: req.Message, At: now, Emotion: resp.Emotion},
			{ID: fmt.Sprintf("turn:%s#%d", req.Thread, state.LastSeq+2), Role: memento.RoleAssistant, Text: reply, At: now},
		},
		State:     memento.ThreadState{Context: next, LastShown: lastShown, Shown: remember(lastShown, shownBefore(state))},
		JobsFor:   func(stored []memento.Message) []memento.JobRequest { return jobs(s, req.Thread, stored) },
		CheckSeq:  true,
		BaseSeq:   state.LastSeq,
		Events:    events,
		EventJobs: eventJobs,
		Answer:    answer,
	})
	if err != nil {
		return nil, fmt.Errorf("save turn: %w", err)
	}
	return resp, nil
}

// keepsRequest reports whether a message the model could not read at all
// ("my bad!", "whoops", a typo) comes in a thread whose request is still in
// force. Mid-conversation such a message reacts to the last answer; asking
// the user to rephrase from scratch would answer it with no titles while the
// catalog has more for the same request, and often the user meant "not
// quite, go on". Small talk, questions and questions about a title are
// read, so they keep their own answers, and a thread with nothing in force
// still gets the request to rephrase.
func keepsRequest(u *memento.Understanding, ac memento.ActiveContext) bool {
	return !u.Recognised && !u.Search && len(u.About) == 0 && u.Question == "" && ac.HasConstraints()
}

// shownBefore returns every title the thread showed, newest first.
func shownBefore(st *memento.ThreadState) []string {
	if len(st.Shown) == 0 {
		return st.LastShown
	}
	return st.Shown
}

// remember puts the titles just shown in front of those shown before,
// once each, keeping at most memento.MaxShownRemembered.
func remember(now, before []string) []string {
	out := make([]string, 0, min(len(now)+len(before), memento.MaxShownRemembered))
	for _, list := range [][]string{now, before} {
		for _, id := range list {
			if len(out) == memento.MaxShownRemembered {
				return out
			}
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// find draws the candidates of a turn and ranks them (pool and rank).
// Titles the thread showed before go after every fresh one, so a
// follow-up never repeats an earlier answer while the catalog has other
// matches, and still shows them when it has none.
func (a *Agent) find(ctx context.Context, s memento.Scope, ac memento.ActiveContext, shown []string, taste *Taste) (*ranking, error) {
	anchors := a.titles(ctx, ac.Like)
	pool, err := a.pool(ctx, ac, taste, anchors, shown)
	if err != nil {
		return nil, err
	}
	return a.rank(ctx, s, ac, pool, taste, anchors, shown)
}

// Rank orders candidates by the catalog's order (a small prior that falls
// with the position, so relevance and recency still count) plus the sum of
// every scorer's score, and drops the titles a scorer drops. Ties keep the
// catalog's order, so ranking is deterministic.
func Rank(ctx context.Context, s memento.Scope, ac memento.ActiveContext, candidates []memento.Title, scorers []Scorer) ([]Ranked, error) {
	ranked := make([]Ranked, len(candidates))
	drop := make([]bool, len(candidates))
	for i, t := range candidates {
		ranked[i] = Ranked{Title: t, Score: positionPrior(i, len(candidates)), Why: Matches(ac, t)}
	}
	for _, sc := range scorers {
		sigs, err := sc.Score(ctx, s, ac, candidates)
		if err != nil {
			return nil, fmt.Errorf("rank: %w", err)
		}
		if len(sigs) != len(candidates) {
			return nil, fmt.Errorf("rank: scorer %T returned %d signals for %d candidates", sc, len(sigs), len(candidates))
		}
		for i, sig := range sigs {
			ranked[i].Score += sig.Score
			ranked[i].Why = append(ranked[i].Why, sig.Why...)
			drop[i] = drop[i] || sig.Drop
		}
	}
	order := make([]int, 0, len(ranked))
	for i := range ranked {
		if !drop[i] {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case ranked[a].Score > ranked[b].Score:
			return -1
		case ranked[a].Score < ranked[b].Score:
			return 1
		}
		return 0
	})
	out := make([]Ranked, len(order))
	for i, j := range order {
		out[i] = ranked[j]
	}
	return out, nil
}

// positionPrior is worth at most 0.1: enough to order otherwise equal
// titles by the catalog's relevance, small beside what scorers say.
func positionPrior(i, n int) float64 {
	if n <= 1 {
		return 0.1
	}
	return 0.1 * float64(n-i) / float64(n)
}

// ungrounded returns the name of a title the reply mentions although the
// answer does not show it: one shown earlier in the thread or turned down.
// Models other than the offline one can slip; titles they could only know
// from the thread are the ones a user would notice.
func (a *Agent) ungrounded(ctx context.Context, reply string, shown []memento.Title, ac memento.ActiveContext, lastShown []string) string {
	current := make(map[string]bool, len(shown))
	for _, t := range shown {
		current[t.ID] = true
	}
	lower := strings.ToLower(reply)
	// A shown title's name may hold an earlier one's ("Ghostbusters II"
	// holds "Ghostbusters"): the shown names are blanked out first.
	for _, t := range shown {
		if name := strings.ToLower(t.Title); name != "" {
			lower = strings.ReplaceAll(lower, name, strings.Repeat("\x00", len(name)))
		}
	}
	for _, id := range append(slices.Clone(lastShown), ac.ExcludedTitleIDs...) {
		if current[id] {
			continue
		}
		t, err := a.Catalog.Title(ctx, id)
		if err != nil || len(t.Title) < 4 {
			continue
		}
		if containsWord(lower, strings.ToLower(t.Title)) {
			return t.Title
		}
	}
	return ""
}

// containsWord reports whether s contains w not glued to other letters.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		if (start == 0 || !isLetter(s[start-1])) && (end == len(s) || !isLetter(s[end])) {
			return true
		}
		i = start + 1
	}
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// titles resolves stored title ids, skipping any the catalog no longer has.
func (a *Agent) titles(ctx context.Context, ids []string) []memento.Title {
	out := make([]memento.Title, 0, len(ids))
	for _, id := range ids {
		t, err := a.Catalog.Title(ctx, id)
		if err != nil {
			continue
		}
		out = append(out, *t)
	}
	return out
}

func (a *Agent) now() time.Time {
	if a.Clock == nil {
		return time.Now()
	}
	return a.Clock.Now()
}

func (a *Agent) logger() *slog.Logger {
	if a.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Logger
}

// MaxMessageBytes bounds one chat message.
const MaxMessageBytes = 4000

func validate(r Request) error {
	switch {
	case strings.TrimSpace(r.User) == "":
		return memento.Errorf(memento.EINVALID, "user is required")
	case strings.TrimSpace(r.Thread) == "":
		return memento.Errorf(memento.EINVALID, "thread is required")
	case strings.TrimSpace(r.Message) == "":
		return memento.Errorf(memento.EINVALID, "message must not be empty")
	case len(r.Message) > MaxMessageBytes:
		return memento.Errorf(memento.EINVALID, "message is %d bytes, over the limit of %d", len(r.Message), MaxMessageBytes)
	}
	return nil
}

func result(r Ranked) TitleResult {
	why := r.Why
	if why == nil {
		why = []string{}
	}
	genres := r.Title.Genres
	if genres == nil {
		genres = []string{}
	}
	return TitleResult{ID: r.Title.ID, Title: r.Title.Title, Type: r.Title.Type, Year: r.Title.Year, Genres: genres,
		Overview: firstSentence(r.Title.Overview), Why: why}
}

// Matches lists the constraints a title satisfies, as reasons for showing it.
func Matches(ac memento.ActiveContext, t memento.Title) []string {
	var why []string
	for _, g := range ac.Genres {
		if slices.ContainsFunc(t.Genres, func(tg string) bool { return strings.EqualFold(tg, g) }) {
			why = append(why, "genre: "+g)
		}
	}
	for _, p := range ac.People {
		why = append(why, "with "+p)
	}
	if ac.MinYear != nil || ac.MaxYear != nil {
		why = append(why, fmt.Sprintf("from %d", t.Year))
	}
	if ac.FreeText != "" {
		why = append(why, "about "+ac.FreeText)
	}
	if why == nil {
		why = []string{}
	}
	return why
}

// Describe renders a context's constraints as a phrase, such as "comedy
// movies from 2010 on".
func Describe(ac memento.ActiveContext) string {
	var b strings.Builder
	if len(ac.Genres) > 0 {
		b.WriteString(strings.ToLower(strings.Join(ac.Genres, " or ")) + " ")
	}
	switch ac.TitleType {
	case memento.TypeMovie:
		b.WriteString("movies")
	case memento.TypeTVSeries:
		b.WriteString("TV series")
	case "":
		b.WriteString("titles")
	default:
		b.WriteString(ac.TitleType + " titles")
	}
	if len(ac.ExcludedGenres) > 0 {
		b.WriteString(" (no " + strings.ToLower(strings.Join(ac.ExcludedGenres, " or ")) + ")")
	}
	if len(ac.People) > 0 {
		b.WriteString(" with " + strings.Join(ac.People, " and "))
	}
	if ac.FreeText != "" {
		b.WriteString(" about " + ac.FreeText)
	}
	b.WriteString(yearPhrase(ac))
	if len(ac.Like) > 0 {
		b.WriteString(" like the title you named")
	}
	if n := len(ac.ExcludedTitleIDs); n > 0 {
		fmt.Fprintf(&b, ", leaving out the %d you have seen or turned down", n)
	}
	return b.String()
}

// maxUsedText bounds the text of one item of an answer's memory.used.
const maxUsedText = 200

// clip cuts s to at most n bytes at a word boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndex(s[:n], " ")
	if cut < n/2 {
		cut = n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return s[:cut] + "…"
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i > 0 && i < 240 {
		return s[:i+1]
	}
	if len(s) > 240 {
		cut := strings.LastIndex(s[:240], " ")
		if cut < 0 {
			cut = 240
		}
		return s[:cut] + "…"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func verbS(n int) string {
	if n == 1 {
		return "es"
	}
	return ""
}
