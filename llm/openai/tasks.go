package openai

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// The task methods of memento.LanguageModel. Each renders its prompt from
// the typed input, asks for output matching its schema, checks the rules a
// schema cannot say, and converts the output to memento's types. Inputs
// that need no model (no facts to file, no message to read) are answered
// without a request.

// DefaultSummaryChars bounds a summary when SummariseInput.MaxChars is 0.
const DefaultSummaryChars = 1200

// noReason stands in for the repair note of a reviewer that rejected
// without saying why, twice.
const noReason = "The reviewer rejected this without saying why; check every item against the source again."

// UnderstandRequest turns a user's turn into a change of the active
// context. Empty genre and people lists mean "not mentioned", as models
// write [] for null; reversed year bounds are swapped; with WithGenres, a
// genre outside the vocabulary costs one repair request and is then dropped. Errors:
// EUNAVAILABLE when the server fails, EUPSTREAM (an *OutputError) when its
// output stays unusable.
func (m *Model) UnderstandRequest(ctx context.Context, in memento.UnderstandInput) (*memento.Understanding, error) {
	in.Context.Normalize()
	data := understandData{in, m.genres}
	u, _, err := run(ctx, m, TaskUnderstand, data, understandSchema(m.genres), func(u *memento.Understanding) error {
		if u.MinYear != nil && u.MaxYear != nil && *u.MinYear > *u.MaxYear {
			return soft("minYear %d is after maxYear %d", *u.MinYear, *u.MaxYear)
		}
		for _, g := range u.Genres {
			if len(m.genres) > 0 && m.genreKey[strings.ToLower(strings.TrimSpace(g))] == "" {
				return soft("genre %q is not in the catalog's vocabulary; use only the genres listed", g)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if u.MinYear != nil && u.MaxYear != nil && *u.MinYear > *u.MaxYear {
		u.MinYear, u.MaxYear = u.MaxYear, u.MinYear
	}
	u.Genres, u.People, u.ExcludeGenres = trimAll(u.Genres), trimAll(u.People), trimAll(u.ExcludeGenres)
	if len(m.genres) > 0 {
		u.Genres, u.ExcludeGenres = m.knownGenres(u.Genres), m.knownGenres(u.ExcludeGenres)
	}
	u.FreeText, u.Question = strings.TrimSpace(u.FreeText), strings.TrimSpace(u.Question)
	u.Like, u.About, u.Seen, u.RejectTitles = cleanRefs(u.Like), cleanRefs(u.About), cleanRefs(u.Seen), cleanRefs(u.RejectTitles)
	u.Corrections = cleanCorrections(u.Corrections)
	u.Soft = cleanSoft(u.Soft)
	if len(u.About) > 0 && len(u.Like)+len(u.Seen)+len(u.RejectTitles) == 0 {
		// A question about a title is answered from the catalog, with no
		// search, whatever the model said.
		u.Search = false
	}
	return u, nil
}

// knownGenres maps genres onto the catalog's spelling and drops the ones
// outside its vocabulary; none left is nil, "not mentioned".
func (m *Model) knownGenres(gs []string) []string {
	known := gs[:0]
	for _, g := range gs {
		if canon := m.genreKey[strings.ToLower(g)]; canon != "" && !slices.Contains(known, canon) {
			known = append(known, canon)
		}
	}
	if len(known) == 0 {
		return nil
	}
	return known
}

// cleanRefs trims names and drops references that point at nothing (no
// position, no name); none left is nil.
func cleanRefs(refs []memento.TitleRef) []memento.TitleRef {
	var out []memento.TitleRef
	for _, r := range refs {
		r.Name = strings.TrimSpace(r.Name)
		if r.Position == 0 && r.Name == "" || slices.Contains(out, r) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// cleanCorrections drops corrections that change nothing.
func cleanCorrections(cs []memento.Correction) []memento.Correction {
	var out []memento.Correction
	for _, c := range cs {
		c.From, c.To = strings.TrimSpace(c.From), strings.TrimSpace(c.To)
		if c.From == "" || c.To == "" || strings.EqualFold(c.From, c.To) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// cleanSoft trims soft constraints, drops those without a value and keeps
// the first of each kind, as the context holds one per kind.
func cleanSoft(ss []memento.SoftConstraint) []memento.SoftConstraint {
	var out []memento.SoftConstraint
	for _, s := range ss {
		s.Kind, s.Value, s.Said = strings.TrimSpace(s.Kind), strings.TrimSpace(s.Value), strings.TrimSpace(s.Said)
		if s.Value == "" || slices.ContainsFunc(out, func(o memento.SoftConstraint) bool { return o.Kind == s.Kind }) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// understandData is what the understanding prompt renders: the input and
// the catalog's genre vocabulary, if known.
type understandData struct {
	memento.UnderstandInput
	Genres []string
}

// WorthRemembering is the sentinel of the attribute pipeline. A blank
// message is not worth remembering and costs no request.
func (m *Model) WorthRemembering(ctx context.Context, message string, schema []memento.AttributeSpec) (*memento.Verdict, error) {
	if strings.TrimSpace(message) == "" {
		return &memento.Verdict{OK: false, Reason: "The message is empty."}, nil
	}
	data := struct {
		Message string
		Schema  []memento.AttributeSpec
	}{message, schema}
	v, _, err := run[verdictOutput](ctx, m, TaskSentinel, data, verdictSchema(), nil)
	if err != nil {
		return nil, err
	}
	return &memento.Verdict{OK: v.OK, Reason: strings.TrimSpace(v.Reason)}, nil
}

// ExtractFacts lists every distinct fact in a message; with a repair note
// it redoes the previous extraction. Blank facts are dropped.
func (m *Model) ExtractFacts(ctx context.Context, in memento.ExtractInput) ([]memento.Fact, error) {
	if strings.TrimSpace(in.Message) == "" {
		return []memento.Fact{}, nil
	}
	out, _, err := run[factsOutput](ctx, m, TaskExtractFacts, in, factsSchema(), nil)
	if err != nil {
		return nil, err
	}
	facts := make([]memento.Fact, 0, len(out.Facts))
	for _, f := range out.Facts {
		f.Text = strings.TrimSpace(f.Text)
		if f.Text != "" {
			facts = append(facts, f)
		}
	}
	return facts, nil
}

// ReviewExtraction compares extracted facts with their message. A
// rejection always carries a repair note.
func (m *Model) ReviewExtraction(ctx context.Context, message string, facts []memento.Fact) (*memento.Verdict, error) {
	data := struct {
		Message string
		Facts   []memento.Fact
	}{message, facts}
	return m.review(ctx, TaskReviewExtraction, data)
}

// ReviewMerge catches a merge that dropped information. A rejection always
// carries a repair note.
func (m *Model) ReviewMerge(ctx context.Context, in memento.MergeInput, merged string) (*memento.Verdict, error) {
	data := struct {
		In     memento.MergeInput
		Merged string
	}{in, merged}
	return m.review(ctx, TaskReviewMerge, data)
}

func (m *Model) review(ctx context.Context, task Task, data any) (*memento.Verdict, error) {
	v, _, err := run(ctx, m, task, data, verdictSchema(), func(v *verdictOutput) error {
		if !v.OK && strings.TrimSpace(v.Reason) == "" {
			return soft("reason must say what is wrong when ok is false")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &memento.Verdict{OK: v.OK, Reason: strings.TrimSpace(v.Reason)}
	if !out.OK && out.Reason == "" {
		out.Reason = noReason
	}
	return out, nil
}

// AssignAttributes assigns each fact one attribute of the schema, or none
// (an empty Attribute). It returns one AttributedFact per fact, in order;
// a fact the model skipped gets none.
func (m *Model) AssignAttributes(ctx context.Context, facts []memento.Fact, schema []memento.AttributeSpec) ([]memento.AttributedFact, error) {
	out := make([]memento.AttributedFact, len(facts))
	for i, f := range facts {
		out[i].Fact = f
	}
	if len(facts) == 0 || len(schema) == 0 {
		return out, nil
	}
	data := struct {
		Facts  []memento.Fact
		Schema []memento.AttributeSpec
	}{facts, schema}
	a, _, err := run(ctx, m, TaskAssignAttributes, data, assignmentsSchema(schema), func(a *assignmentsOutput) error {
		seen := make([]bool, len(facts))
		for _, x := range a.Assignments {
			if x.Index < 0 || x.Index >= len(facts) {
				return fmt.Errorf("index %d is not a fact; the facts are numbered 0 to %d", x.Index, len(facts)-1)
			}
			if seen[x.Index] {
				return soft("fact %d is assigned twice; give each fact exactly one attribute", x.Index)
			}
			seen[x.Index] = true
		}
		for i, ok := range seen {
			if !ok {
				return soft("fact %d has no assignment; give every fact one attribute or %s", i, noAttribute)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	done := make([]bool, len(facts))
	for _, x := range a.Assignments {
		if done[x.Index] {
			continue
		}
		done[x.Index] = true
		if x.Attribute != noAttribute {
			out[x.Index].Attribute = x.Attribute
		}
	}
	return out, nil
}

// MergeFact merges a fact into an attribute's consolidated value. An empty
// merge would erase the memory, so it is never accepted.
func (m *Model) MergeFact(ctx context.Context, in memento.MergeInput) (string, error) {
	out, _, err := run(ctx, m, TaskMergeFact, in, mergedSchema(), func(v *mergedOutput) error {
		if strings.TrimSpace(v.Merged) == "" {
			return errors.New("merged must not be empty")
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Merged), nil
}

// Summarise rolls an exchange into a thread's running summary. With no
// messages it returns the previous summary. A summary still over MaxChars
// after a repair request is cut at the last sentence or word that fits.
func (m *Model) Summarise(ctx context.Context, in memento.SummariseInput) (string, error) {
	if len(in.Messages) == 0 {
		return in.Previous, nil
	}
	if in.MaxChars <= 0 {
		in.MaxChars = DefaultSummaryChars
	}
	out, _, err := run(ctx, m, TaskSummarise, in, summarySchema(), func(v *summaryOutput) error {
		s := strings.TrimSpace(v.Summary)
		if s == "" {
			return errors.New("summary must not be empty")
		}
		if n := utf8.RuneCountInString(s); n > in.MaxChars {
			return soft("the summary is %d characters long; it must be at most %d", n, in.MaxChars)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return truncate(strings.TrimSpace(out.Summary), in.MaxChars), nil
}

// ExtractPreferences finds the likes and dislikes in a message, normalised
// to concepts. Blank concepts are dropped and a zero strength becomes the
// weakest one, 0.1.
func (m *Model) ExtractPreferences(ctx context.Context, message string) ([]memento.Concept, error) {
	if strings.TrimSpace(message) == "" {
		return []memento.Concept{}, nil
	}
	data := struct{ Message string }{message}
	out, _, err := run(ctx, m, TaskPreferences, data, conceptsSchema(), func(v *conceptsOutput) error {
		for i, c := range v.Concepts {
			if c.Strength <= 0 {
				return soft("concepts[%d].strength must be above 0", i)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	concepts := make([]memento.Concept, 0, len(out.Concepts))
	for _, c := range out.Concepts {
		c.Concept = strings.TrimSpace(c.Concept)
		if c.Concept == "" {
			continue
		}
		c.Strength = math.Max(c.Strength, 0.1)
		concepts = append(concepts, c)
	}
	return concepts, nil
}

// DescribeCluster names a cluster's direction and each member's stance.
// Errors: EINVALID for a cluster without members.
func (m *Model) DescribeCluster(ctx context.Context, members []memento.ClusterMember) (*memento.ClusterDescription, error) {
	if len(members) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "A cluster to describe must have members.")
	}
	data := struct{ Members []memento.ClusterMember }{members}
	out, _, err := run(ctx, m, TaskDescribeCluster, data, clusterSchema(), func(d *memento.ClusterDescription) error {
		if strings.TrimSpace(d.Description) == "" {
			return errors.New("description must not be empty")
		}
		if len(d.Stances) != len(members) {
			return fmt.Errorf("stances has %d entries; it needs exactly one per member, %d", len(d.Stances), len(members))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Description = strings.TrimSpace(out.Description)
	return out, nil
}

// WriteReply writes the agent's answer from the titles and notes given.
func (m *Model) WriteReply(ctx context.Context, in memento.ReplyInput) (string, error) {
	in.Context.Normalize()
	out, _, err := run(ctx, m, TaskWriteReply, in, replySchema(), func(v *replyOutput) error {
		if strings.TrimSpace(v.Reply) == "" {
			return errors.New("reply must not be empty")
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Reply), nil
}

// truncate cuts s to at most n runes, at the end of the last sentence that
// fits, else at the last space, so a summary never ends mid-word.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	cut := string(rs[:n])
	trim := func(s string) string {
		return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' || r == ':' })
	}
	if i := strings.LastIndexAny(cut, ".!?"); i >= len(cut)/2 {
		return cut[:i+1]
	}
	if unicode.IsSpace(rs[n]) {
		return trim(cut)
	}
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
		return trim(cut[:i])
	}
	return cut
}

func trimAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := ss[:0]
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
