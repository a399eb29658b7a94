package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/fulltext"
)

// IARDDialogue is one annotated recommendation dialogue in the IARD format
// (a subset of ReDial annotated by UserSimCRS).
type IARDDialogue struct {
	ID           string          `json:"conversation_id"`
	Conversation []IARDUtterance `json:"conversation"`
}

// IARDUtterance is one turn of a dialogue with its dialogue acts.
type IARDUtterance struct {
	Participant  string    `json:"participant"`
	Utterance    string    `json:"utterance"`
	DialogueActs []IARDAct `json:"dialogue_acts"`
}

// IARDAct is an intent (REJ rejects, SEE already seen, CRI-A adds a
// criterion, ...) with slot values such as ["GENRE", "thrillers", null, null].
type IARDAct struct {
	Intent     string  `json:"intent"`
	SlotValues [][]any `json:"slot_values"`
}

// ReadIARD reads a JSON array of dialogues.
func ReadIARD(r io.Reader) ([]IARDDialogue, error) {
	var ds []IARDDialogue
	if err := json.NewDecoder(r).Decode(&ds); err != nil {
		return nil, memento.Errorf(memento.EINVALID, "IARD data must be a JSON array of dialogues: %v", err)
	}
	for i, d := range ds {
		if d.ID == "" {
			return nil, memento.Errorf(memento.EINVALID, "IARD dialogue %d has no conversation_id", i)
		}
	}
	return ds, nil
}

// has reports whether the utterance carries one of the intents.
func (u IARDUtterance) has(intents ...string) bool {
	for _, a := range u.DialogueActs {
		if slices.Contains(intents, a.Intent) {
			return true
		}
	}
	return false
}

// slots returns the values of one slot type in acts of the given intent.
func (u IARDUtterance) slots(intent, slot string) []string {
	var out []string
	for _, a := range u.DialogueActs {
		if a.Intent != intent {
			continue
		}
		for _, sv := range a.SlotValues {
			if len(sv) >= 2 && fmt.Sprint(sv[0]) == slot {
				if v, ok := sv[1].(string); ok && v != "" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// Turner answers a user's message; *agent.Agent is one.
type Turner interface {
	Turn(ctx context.Context, tenant string, req agent.Request) (*agent.Response, error)
}

// FollowupResult is the outcome of `memento eval followup`.
//
// Rejection compliance: a user turn annotated REJ or SEE turns down the
// titles of the agent's newest answer before it and the titles the turn's
// own REJ or SEE acts name (resolved in the catalog). It is judged when
// something was turned down so far in the dialogue, and honoured only when
// all three hold: no title turned down so far (at this turn or before)
// comes back in this turn's answer or any later one; this turn's answer is
// not empty while the catalog has titles matching its active context
// (unless the turn asks a question, INQ, which the answer may answer
// instead); and, unless the turn also states what the user wants (IQU,
// CRI-A, CRI-C, CRI-F, PRO), every constraint of the previous active
// context is kept.
//
// Criteria capture: a user turn whose IQU or CRI-* acts carry GENRE,
// KEYWORDS, TITLE, ACTOR, DIRECTOR or YEAR slot values adds criteria; it
// is captured when every judged criterion is in the active context the
// agent returns for it: a genre among its genres or excluded genres (a
// criterion may turn one down, "maybe something not animated"); a keyword
// as such a genre or as a word of its free text, soft wishes or
// corrections; a title among its "like" titles or excluded titles; a
// person among its people; an era overlapping its year bounds. Titles the
// catalog does not hold, titles of a critique (CRI-F, the title commented
// on) and eras that cannot be read are not judged.
type FollowupResult struct {
	Dialogues        int               `json:"dialogues"`
	RejectTurns      int               `json:"rejectTurns"`
	RejectCompliance float64           `json:"rejectCompliance"`
	CriteriaTurns    int               `json:"criteriaTurns"`
	CriteriaCapture  float64           `json:"criteriaCapture"`
	Failures         []FollowupFailure `json:"failures,omitempty"`

	// RejectRepeated, RejectEmpty and RejectDropped count the rejection
	// turns that failed each condition (a turn may fail several).
	RejectRepeated int `json:"rejectRepeated"`
	RejectEmpty    int `json:"rejectEmpty"`
	RejectDropped  int `json:"rejectDropped"`
	// Criteria counts the judged criteria of the criterion turns, and
	// CriteriaValueCapture is the share of them captured.
	Criteria             int     `json:"criteria"`
	CriteriaValueCapture float64 `json:"criteriaValueCapture"`
	// CriteriaBySlot breaks the criteria down by slot type.
	CriteriaBySlot map[string]SlotCapture `json:"criteriaBySlot"`
	// Baselines holds the figures of other agents on the same dialogues,
	// such as BaselineIgnoreRejections.
	Baselines map[string]FollowupFigures `json:"baselines,omitempty"`
}

// SlotCapture counts the judged and the captured criteria of one slot type.
type SlotCapture struct {
	Judged   int `json:"judged"`
	Captured int `json:"captured"`
}

// FollowupFigures are the headline figures of one run.
type FollowupFigures struct {
	RejectTurns      int     `json:"rejectTurns"`
	RejectCompliance float64 `json:"rejectCompliance"`
	CriteriaTurns    int     `json:"criteriaTurns"`
	CriteriaCapture  float64 `json:"criteriaCapture"`
}

// Figures returns the headline figures of r.
func (r *FollowupResult) Figures() FollowupFigures {
	return FollowupFigures{RejectTurns: r.RejectTurns, RejectCompliance: r.RejectCompliance, CriteriaTurns: r.CriteriaTurns, CriteriaCapture: r.CriteriaCapture}
}

// BaselineIgnoreRejections names the run of the same agent with every
// rejection stripped from its understanding (IgnoreRejections).
const BaselineIgnoreRejections = "ignoreRejections"

// BaselineIgnoreRejectionsForgetShown names the run that also forgets
// which titles the thread showed before the last answer
// (agent.Agent.ForgetShown): with rejections ignored, only the last
// answer's titles wait behind fresh ones.
const BaselineIgnoreRejectionsForgetShown = "ignoreRejectionsForgetShown"

// FollowupFailure is one turn that failed a check.
type FollowupFailure struct {
	Dialogue  string   `json:"dialogue"`
	Turn      int      `json:"turn"`
	Check     string   `json:"check"` // "reject", "reject-empty", "reject-constraints" or "criteria"
	Utterance string   `json:"utterance"`
	Want      []string `json:"want"`
	Got       []string `json:"got"`
	// Constraints, Reply and Notes are the agent's answer to the turn
	// (its active context, as describeConstraints lists it), to tell why
	// it failed.
	Constraints []string `json:"constraints,omitempty"`
	Reply       string   `json:"reply,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// FollowupOptions configure the follow-up evaluation.
type FollowupOptions struct {
	Tenant string
	// UserPrefix names each dialogue's user and thread: UserPrefix and
	// the conversation id. Default "iard-". Runs of different agents over
	// one store need different prefixes, or the second would meet the
	// first one's memories.
	UserPrefix string
	// Genres maps a slot value such as "thrillers" to catalog genres.
	Genres func(string) []string
	// Read, when set, is how a language model reads a slot value on its
	// own. A genre or keyword is also captured when the active context
	// holds what that reading holds: one of its genres or people, or year
	// bounds overlapping its years ("classic" read as before 1980).
	Read func(string) *memento.Understanding
	// Catalog resolves the titles a dialogue names and tells whether an
	// active context has matches. Without it, named titles and empty
	// answers are not judged.
	Catalog memento.Catalog
}

// criterionIntents are the user intents that add or change criteria.
var criterionIntents = []string{"IQU", "CRI-A", "CRI-C", "CRI-F"}

// criterionSlots are the slot types judged as criteria.
var criterionSlots = []string{"GENRE", "KEYWORDS", "TITLE", "ACTOR", "DIRECTOR", "YEAR"}

// Followup replays the user turns of each dialogue through t, each dialogue
// in its own thread of its own user, and scores the checks above.
func Followup(ctx context.Context, t Turner, dialogues []IARDDialogue, o FollowupOptions) (*FollowupResult, error) {
	if o.UserPrefix == "" {
		o.UserPrefix = "iard-"
	}
	if o.Genres == nil {
		o.Genres = func(string) []string { return nil }
	}
	j := &judge{o: o, titles: map[string][]string{}}
	res := &FollowupResult{Dialogues: len(dialogues), CriteriaBySlot: map[string]SlotCapture{}}
	var rejectOK, criteriaOK, valuesOK int
	for _, d := range dialogues {
		user := o.UserPrefix + d.ID
		var responses []*agent.Response
		var utterances []IARDUtterance
		for _, u := range d.Conversation {
			if u.Participant != "USER" || strings.TrimSpace(u.Utterance) == "" {
				continue
			}
			resp, err := t.Turn(ctx, o.Tenant, agent.Request{User: user, Thread: user, Message: u.Utterance})
			if err != nil {
				return nil, fmt.Errorf("dialogue %s: %w", d.ID, err)
			}
			responses = append(responses, resp)
			utterances = append(utterances, u)
		}
		var rejected []string // in the order they were turned down
		for i, u := range utterances {
			fail := func(check string, want, got []string) {
				r := responses[i]
				res.Failures = append(res.Failures, FollowupFailure{
					Dialogue: d.ID, Turn: i + 1, Check: check, Utterance: u.Utterance, Want: want, Got: got,
					Constraints: describeConstraints(r.ActiveContext), Reply: r.Reply, Notes: r.Notes,
				})
			}
			if u.has("REJ", "SEE") {
				for _, id := range lastTitles(responses[:i]) {
					rejected = appendNew(rejected, id)
				}
				for _, name := range u.slotsOf([]string{"REJ", "SEE"}, "TITLE") {
					ids, err := j.resolve(ctx, name, u.Utterance)
					if err != nil {
						return nil, fmt.Errorf("dialogue %s turn %d: %w", d.ID, i+1, err)
					}
					for _, id := range ids {
						rejected = appendNew(rejected, id)
					}
				}
				if len(rejected) > 0 {
					res.RejectTurns++
					ok := true
					var repeated []string
					for _, r := range responses[i:] {
						for _, id := range intersect(rejected, ids(r.Titles)) {
							repeated = appendNew(repeated, id)
						}
					}
					if len(repeated) > 0 {
						ok = false
						res.RejectRepeated++
						fail("reject", slices.Clone(rejected), repeated)
					}
					if len(responses[i].Titles) == 0 && !u.has("INQ") {
						total, err := j.matches(ctx, responses[i].ActiveContext)
						if err != nil {
							return nil, fmt.Errorf("dialogue %s turn %d: %w", d.ID, i+1, err)
						}
						if total > 0 {
							ok = false
							res.RejectEmpty++
							fail("reject-empty", []string{fmt.Sprintf("%d matching titles", total)}, nil)
						}
					}
					if i > 0 && !u.has(append([]string{"PRO"}, criterionIntents...)...) {
						if dropped := droppedConstraints(responses[i-1].ActiveContext, responses[i].ActiveContext); len(dropped) > 0 {
							ok = false
							res.RejectDropped++
							fail("reject-constraints", dropped, describeConstraints(responses[i].ActiveContext))
						}
					}
					if ok {
						rejectOK++
					}
				}
			}
			judged, captured := 0, 0
			var missed []string
			for _, a := range u.DialogueActs {
				if !slices.Contains(criterionIntents, a.Intent) {
					continue
				}
				for _, sv := range a.SlotValues {
					if len(sv) < 2 {
						continue
					}
					slot := fmt.Sprint(sv[0])
					v, _ := sv[1].(string)
					if v == "" || !slices.Contains(criterionSlots, slot) {
						continue
					}
					ok, judge, err := j.captured(ctx, a.Intent, slot, v, u.Utterance, responses[i].ActiveContext)
					if err != nil {
						return nil, fmt.Errorf("dialogue %s turn %d: %w", d.ID, i+1, err)
					}
					if !judge {
						continue
					}
					judged++
					sc := res.CriteriaBySlot[slot]
					sc.Judged++
					if ok {
						captured++
						sc.Captured++
					} else {
						missed = append(missed, slot+" "+v)
					}
					res.CriteriaBySlot[slot] = sc
				}
			}
			if judged > 0 {
				res.CriteriaTurns++
				res.Criteria += judged
				valuesOK += captured
				if captured == judged {
					criteriaOK++
				} else {
					fail("criteria", missed, describeConstraints(responses[i].ActiveContext))
				}
			}
		}
	}
	res.RejectCompliance = ratio(rejectOK, res.RejectTurns)
	res.CriteriaCapture = ratio(criteriaOK, res.CriteriaTurns)
	res.CriteriaValueCapture = ratio(valuesOK, res.Criteria)
	return res, nil
}

// slotsOf returns the values of one slot type in acts of any of the
// intents.
func (u IARDUtterance) slotsOf(intents []string, slot string) []string {
	var out []string
	for _, in := range intents {
		for _, v := range u.slots(in, slot) {
			out = appendNew(out, v)
		}
	}
	return out
}

// judge resolves what the checks need from the catalog, caching titles
// by name.
type judge struct {
	o      FollowupOptions
	titles map[string][]string
}

// utteranceYear finds "Name (1999)" in an utterance, as ReDial writes
// the titles it links.
func utteranceYear(name, utterance string) int {
	re, err := regexp.Compile(`(?i)` + regexp.QuoteMeta(name) + `\s*\((\d{4})\)`)
	if err != nil {
		return 0
	}
	m := re.FindStringSubmatch(utterance)
	if m == nil {
		return 0
	}
	y, _ := strconv.Atoi(m[1])
	return y
}

// resolve returns the ids of the catalog titles a dialogue names: those
// whose normalised title is the name's and, when the utterance gives a
// year, whose year is within one of it. It returns none without a catalog.
func (j *judge) resolve(ctx context.Context, name, utterance string) ([]string, error) {
	if j.o.Catalog == nil {
		return nil, nil
	}
	if u, err := url.QueryUnescape(name); err == nil {
		name = u // IARD escapes some characters ("Why Him%3F")
	}
	year := utteranceYear(name, utterance)
	key := fmt.Sprintf("%s\x00%d", name, year)
	if got, ok := j.titles[key]; ok {
		return got, nil
	}
	want := NormalizeTitle(name)
	var out []string
	if want != "" {
		page, err := j.o.Catalog.Search(ctx, memento.TitleQuery{Text: name, Page: 1, Size: memento.MaxPageSize})
		if err != nil {
			return nil, fmt.Errorf("resolve title %q: %w", name, err)
		}
		for _, t := range page.Titles {
			if NormalizeTitle(t.Title) == want && (year == 0 || (t.Year >= year-1 && t.Year <= year+1)) {
				out = append(out, t.ID)
			}
		}
	}
	j.titles[key] = out
	return out, nil
}

// matches counts the catalog titles that fit an active context; without
// a catalog it reports none, so nothing is judged against it.
func (j *judge) matches(ctx context.Context, ac memento.ActiveContext) (int, error) {
	if j.o.Catalog == nil {
		return 0, nil
	}
	page, err := j.o.Catalog.Search(ctx, agent.Query(ac, 1, 1))
	if err != nil {
		return 0, fmt.Errorf("count matches: %w", err)
	}
	return page.Total, nil
}

// captured reports whether one criterion is in the active context, and
// whether it can be judged at all.
func (j *judge) captured(ctx context.Context, intent, slot, value, utterance string, ac memento.ActiveContext) (ok, judged bool, err error) {
	switch slot {
	case "GENRE", "KEYWORDS":
		if containsAny(append(slices.Clone(ac.Genres), ac.ExcludedGenres...), j.o.Genres(value)) {
			return true, true, nil
		}
		if j.o.Read != nil && holdsReading(ac, j.o.Read(value)) {
			return true, true, nil
		}
		return sharesTerm(value, contextWords(ac)), true, nil
	case "TITLE":
		if intent == "CRI-F" {
			// A title in a critique is what the user comments on ("black
			// swan was more of a drama"), not a title wanted.
			return false, false, nil
		}
		ids, err := j.resolve(ctx, value, utterance)
		if err != nil || len(ids) == 0 {
			return false, false, err
		}
		if len(intersect(ids, append(slices.Clone(ac.Like), ac.ExcludedTitleIDs...))) > 0 {
			return true, true, nil
		}
		n := NormalizeTitle(value)
		return n != "" && strings.Contains(" "+NormalizeTitle(ac.FreeText)+" ", " "+n+" "), true, nil
	case "ACTOR", "DIRECTOR":
		want := NormalizeTitle(value)
		for _, p := range ac.People {
			if NormalizeTitle(p) == want {
				return true, true, nil
			}
		}
		return want != "" && strings.Contains(" "+NormalizeTitle(ac.FreeText)+" ", " "+want+" "), true, nil
	case "YEAR":
		from, to, ok := parseEra(value)
		if !ok {
			return false, false, nil
		}
		if ac.MinYear == nil && ac.MaxYear == nil {
			return false, true, nil
		}
		lo, hi := yearWindow(ac.MinYear, ac.MaxYear)
		return lo <= to && hi >= from, true, nil
	}
	return false, false, nil
}

// yearWindow returns the years between two optional bounds.
func yearWindow(minYear, maxYear *int) (lo, hi int) {
	lo, hi = memento.MinYear, memento.MaxYear
	if minYear != nil {
		lo = *minYear
	}
	if maxYear != nil {
		hi = *maxYear
	}
	return lo, hi
}

// holdsReading reports whether an active context holds something of a
// model's reading of a slot value: one of its genres or people, or year
// bounds overlapping its years.
func holdsReading(ac memento.ActiveContext, u *memento.Understanding) bool {
	if u == nil {
		return false
	}
	if containsAny(append(slices.Clone(ac.Genres), ac.ExcludedGenres...), append(slices.Clone(u.Genres), u.ExcludeGenres...)) ||
		containsAny(ac.People, u.People) {
		return true
	}
	if (u.MinYear != nil || u.MaxYear != nil) && (ac.MinYear != nil || ac.MaxYear != nil) {
		rlo, rhi := yearWindow(u.MinYear, u.MaxYear)
		clo, chi := yearWindow(ac.MinYear, ac.MaxYear)
		return clo <= rhi && chi >= rlo
	}
	return false
}

var eraPattern = regexp.MustCompile(`^(?:the\s+)?(?:(\d{4})|'?(\d{2}))\s*'?(s)?$`)

// parseEra reads an era such as "80s", "60's", "1990s" or "1999" as a span
// of years.
func parseEra(v string) (from, to int, ok bool) {
	m := eraPattern.FindStringSubmatch(strings.ToLower(strings.TrimSpace(v)))
	if m == nil {
		return 0, 0, false
	}
	if m[1] != "" {
		from, _ = strconv.Atoi(m[1])
	} else {
		from, _ = strconv.Atoi(m[2])
		if from <= 30 { // "20s" is the 2020s, not the 1920s
			from += 2000
		} else {
			from += 1900
		}
	}
	if m[3] == "" && m[1] != "" {
		return from, from, true
	}
	if m[3] == "" {
		return 0, 0, false // "80" alone is not an era
	}
	from -= from % 10
	return from, from + 9, true
}

// contextWords are the words of an active context a keyword can land in:
// its free text, soft wishes and corrections.
func contextWords(ac memento.ActiveContext) string {
	parts := []string{ac.FreeText}
	for _, s := range ac.Soft {
		parts = append(parts, s.Value, s.Said)
	}
	for _, c := range ac.Corrections {
		parts = append(parts, c.From, c.To)
	}
	parts = append(parts, ac.Genres...)
	parts = append(parts, ac.ExcludedGenres...)
	return strings.Join(parts, " ")
}

// sharesTerm reports whether a topic word of value, stemmed, is a term of
// text.
func sharesTerm(value, text string) bool {
	have := fulltext.Tokens(text)
	for _, w := range fulltext.QueryWords(value) {
		if t := fulltext.Term(w); t != "" && slices.Contains(have, t) {
			return true
		}
	}
	return false
}

// droppedConstraints lists the constraints of before that after lost.
func droppedConstraints(before, after memento.ActiveContext) []string {
	var out []string
	for _, g := range before.Genres {
		if !containsAny(after.Genres, []string{g}) {
			out = append(out, "genre "+g)
		}
	}
	for _, g := range before.ExcludedGenres {
		if !containsAny(after.ExcludedGenres, []string{g}) {
			out = append(out, "excluded genre "+g)
		}
	}
	for _, p := range before.People {
		if !containsAny(after.People, []string{p}) {
			out = append(out, "person "+p)
		}
	}
	if before.TitleType != "" && before.TitleType != after.TitleType {
		out = append(out, "type "+before.TitleType)
	}
	if before.MinYear != nil && (after.MinYear == nil || *after.MinYear != *before.MinYear) {
		out = append(out, fmt.Sprintf("from %d", *before.MinYear))
	}
	if before.MaxYear != nil && (after.MaxYear == nil || *after.MaxYear != *before.MaxYear) {
		out = append(out, fmt.Sprintf("to %d", *before.MaxYear))
	}
	if before.FreeText != "" && !strings.EqualFold(before.FreeText, after.FreeText) {
		out = append(out, "text "+before.FreeText)
	}
	return out
}

// describeConstraints lists an active context's constraints, for a
// failure's "got".
func describeConstraints(ac memento.ActiveContext) []string {
	var out []string
	for _, g := range ac.Genres {
		out = append(out, "genre "+g)
	}
	for _, g := range ac.ExcludedGenres {
		out = append(out, "excluded genre "+g)
	}
	for _, p := range ac.People {
		out = append(out, "person "+p)
	}
	if ac.TitleType != "" {
		out = append(out, "type "+ac.TitleType)
	}
	if ac.MinYear != nil {
		out = append(out, fmt.Sprintf("from %d", *ac.MinYear))
	}
	if ac.MaxYear != nil {
		out = append(out, fmt.Sprintf("to %d", *ac.MaxYear))
	}
	if ac.FreeText != "" {
		out = append(out, "text "+ac.FreeText)
	}
	for _, id := range ac.Like {
		out = append(out, "like "+id)
	}
	for _, s := range ac.Soft {
		out = append(out, s.Kind+" "+s.Value)
	}
	return out
}

// IgnoreRejections wraps a model so that it never understands a
// rejection: Reject, Seen and RejectTitles are stripped from every
// understanding. The agent behind it is the baseline that shows whether the
// rejection check separates an agent that honours rejections from one that
// does not.
func IgnoreRejections(m agent.Model) agent.Model { return ignoreRejections{m} }

type ignoreRejections struct{ agent.Model }

func (m ignoreRejections) UnderstandRequest(ctx context.Context, in memento.UnderstandInput) (*memento.Understanding, error) {
	u, err := m.Model.UnderstandRequest(ctx, in)
	if err != nil || u == nil {
		return u, err
	}
	c := *u
	c.Reject, c.Seen, c.RejectTitles = false, nil, nil
	return &c, nil
}

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// lastTitles returns the ids of the newest answer that showed titles.
func lastTitles(rs []*agent.Response) []string {
	for i := len(rs) - 1; i >= 0; i-- {
		if len(rs[i].Titles) > 0 {
			return ids(rs[i].Titles)
		}
	}
	return nil
}

func ids(ts []agent.TitleResult) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range b {
		if slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

func containsAny(have, want []string) bool {
	for _, w := range want {
		if slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return true
		}
	}
	return false
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}
