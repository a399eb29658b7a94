package offline

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// The reply writer fills templates. It names only the titles it is given,
// each with its year, so a reply is always grounded in the catalog; it
// never echoes the user's message, the summary or memories, which could
// name other titles.

// helpText explains the agent when a user asks how it works.
const helpText = "I recommend movies and TV series from the catalog, and I remember. " +
	"Tell me what you're in the mood for: a genre, an era (\"from the 90s\", \"recent\"), " +
	"people (\"with Tom Hanks\"), a topic, a movie or a series, and how many. " +
	"Follow-ups build on your last request: \"movie only\" or \"make it older\" keep everything else, " +
	"and \"not those\" or \"I've seen them\" brings different titles and leaves out the ones you turned down. " +
	"A new request starts over. I also remember what you tell me about yourself, like genres you love " +
	"or can't stand and where you watch, and you can see and edit everything I remember."

// WriteReply writes the agent's answer: the titles found with the context
// that found them, the agent's notes, or, for a turn without a search, an
// answer to a question, a greeting or a request to rephrase. A question
// about one title (in.About) is answered from that title's catalog fields.
//
// Memory is mentioned only through in.MemoryEffect, once, because a
// sentence such as "I kept your tastes in mind" is a claim: it must be
// true of this turn, and only the agent knows whether memory changed it.
func (m *Model) WriteReply(ctx context.Context, in memento.ReplyInput) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("write reply: %w", err)
	}
	effect := effectSentence(in.MemoryEffect)
	notes := joinNotes(dropNote(in.Notes, in.MemoryEffect))
	if in.About != nil && (!in.Searched || len(in.Titles) == 0) {
		return joinSentences(aboutReply(*in.About), effect, notes), nil
	}
	if !in.Searched {
		return joinSentences(m.talkReply(in), effect), nil
	}
	var b strings.Builder
	if in.Frustrated {
		b.WriteString(frustratedOpening(len(in.Titles)) + " ")
	}
	excluded := len(in.Context.ExcludedTitleIDs)
	if len(in.Titles) == 0 {
		fmt.Fprintf(&b, "I couldn't find any %s in the catalog", describeContext(in.Context, 0))
		if excluded > 0 {
			fmt.Fprintf(&b, " apart from the %s you've already seen or turned down", countOf(excluded, "title"))
		}
		b.WriteString(".")
		if effect != "" {
			b.WriteString(" " + effect)
		}
		if notes != "" {
			b.WriteString(" " + notes)
		}
		if in.Frustrated {
			b.WriteString(" " + widenOffer(in.Widen))
		} else {
			b.WriteString(" Try loosening something: another genre, a wider year range or fewer people.")
		}
		return b.String(), nil
	}
	if in.About != nil {
		b.WriteString(aboutReply(*in.About) + "\n")
	}
	verb := "Here are"
	if len(in.Titles) == 1 {
		verb = "Here is"
	}
	fmt.Fprintf(&b, "%s %s", verb, describeContext(in.Context, len(in.Titles)))
	if excluded > 0 {
		fmt.Fprintf(&b, ", leaving out the %s you've already seen or turned down", countOf(excluded, "title"))
	}
	b.WriteString(":")
	for i, t := range in.Titles {
		fmt.Fprintf(&b, "\n%d. %s", i+1, titleLine(t))
	}
	if effect != "" {
		b.WriteString("\n" + effect)
	}
	if notes != "" {
		b.WriteString("\n" + notes)
	}
	if in.Frustrated {
		b.WriteString("\n" + widenOffer(in.Widen))
		return strings.TrimSpace(b.String()), nil
	}
	b.WriteString("\nWant something else? Say \"not those\" for different ones, or refine it: \"movie only\", \"make it older\".")
	return strings.TrimSpace(b.String()), nil
}

// effectSentence writes what memory changed as a sentence of its own, or
// nothing when it changed nothing. It is given as a clause ("leaving out
// Heat, which you have seen"), so it gets a capital and a full stop.
func effectSentence(effect string) string {
	effect = strings.TrimSpace(effect)
	if effect == "" {
		return ""
	}
	return joinNotes([]string{effect})
}

// dropNote leaves out the notes that say what the memory effect says, so
// that the reply says it once even when the agent also noted it.
func dropNote(notes []string, effect string) []string {
	key := strings.ToLower(strings.TrimRight(strings.TrimSpace(effect), ".!?"))
	if key == "" {
		return notes
	}
	var out []string
	for _, n := range notes {
		if strings.ToLower(strings.TrimRight(strings.TrimSpace(n), ".!?")) != key {
			out = append(out, n)
		}
	}
	return out
}

// joinSentences joins the non-empty parts with spaces.
func joinSentences(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// An answer about a title quotes the first sentences of its plot, not the
// whole article: at most aboutPlotSentences of them, in aboutPlotChars.
const (
	aboutPlotSentences = 3
	aboutPlotChars     = 420
)

// aboutReply describes one title from what the catalog says of it: its
// years, kind, genres, main cast, runtime and the first sentences of its
// plot. It names no other title than this one, except as the plot does.
func aboutReply(t memento.Title) string {
	var b strings.Builder
	b.WriteString(t.Title)
	switch {
	case t.Year > 0 && t.EndYear > t.Year:
		fmt.Fprintf(&b, " (%d–%d)", t.Year, t.EndYear)
	case t.Year > 0:
		fmt.Fprintf(&b, " (%d)", t.Year)
	}
	b.WriteString(" " + describeKind(t))
	if len(t.Cast) > 0 {
		cast := t.Cast
		if len(cast) > 3 {
			cast = cast[:3]
		}
		fmt.Fprintf(&b, " starring %s", joinList(cast, "and"))
	}
	b.WriteString(".")
	if t.RuntimeMinutes > 0 {
		fmt.Fprintf(&b, " It runs %d minutes.", t.RuntimeMinutes)
	}
	if plot := leadSentences(t.Overview, aboutPlotSentences, aboutPlotChars); plot != "" {
		b.WriteString(" " + plot)
	} else {
		b.WriteString(" The catalog has no plot summary for it.")
	}
	return b.String()
}

// describeKind is "is a crime and thriller movie" or "is a series".
func describeKind(t memento.Title) string {
	kind := "title"
	switch t.Type {
	case memento.TypeMovie:
		kind = "movie"
	case memento.TypeTVSeries:
		kind = "series"
	}
	if len(t.Genres) == 0 {
		return "is " + article(kind) + " " + kind
	}
	gs := make([]string, len(t.Genres))
	for k, g := range t.Genres {
		gs[k] = strings.ToLower(g)
	}
	desc := joinList(gs, "and")
	return "is " + article(desc) + " " + desc + " " + kind
}

// leadSentences returns the first n sentences of text, or fewer to fit in
// limit bytes, or the first sentence cut at a word when even it is longer.
func leadSentences(text string, n, limit int) string {
	sents := splitSentences(strings.Join(strings.Fields(text), " "))
	if len(sents) == 0 {
		return ""
	}
	out := ""
	for i, s := range sents {
		if i == n {
			break
		}
		next := strings.TrimSpace(out + " " + s)
		if len(next) > limit {
			break
		}
		out = next
	}
	if out == "" {
		out = truncateWords(sents[0], limit)
	}
	return out
}

// titleLine is "Title (1994): Comedy, Drama".
func titleLine(t memento.Title) string {
	s := t.Title
	if t.Year > 0 {
		s += " (" + strconv.Itoa(t.Year) + ")"
	}
	if len(t.Genres) > 0 {
		s += ": " + strings.Join(t.Genres, ", ")
	}
	return s
}

// joinNotes writes the agent's notes as sentences.
func joinNotes(notes []string) string {
	var out []string
	for _, n := range notes {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !strings.HasSuffix(n, ".") && !strings.HasSuffix(n, "!") && !strings.HasSuffix(n, "?") {
			n += "."
		}
		r, size := utf8.DecodeRuneInString(n)
		out = append(out, string(unicode.ToUpper(r))+n[size:])
	}
	return strings.Join(out, " ")
}

// describeContext puts the active context in words: "3 comedy movies from
// 2010 on", "science fiction series with Tom Hanks from the 1990s". A zero
// n leaves the count out.
func describeContext(c memento.ActiveContext, n int) string {
	var parts []string
	if n > 0 {
		parts = append(parts, strconv.Itoa(n))
	}
	if len(c.Genres) > 0 {
		gs := make([]string, len(c.Genres))
		for i, g := range c.Genres {
			gs[i] = strings.ToLower(g)
		}
		parts = append(parts, joinList(gs, "and"))
	}
	one := n == 1
	switch c.TitleType {
	case memento.TypeMovie:
		parts = append(parts, pick(one, "movie", "movies"))
	case memento.TypeTVSeries:
		parts = append(parts, "series")
	default:
		parts = append(parts, pick(one, "title", "titles"))
	}
	s := strings.Join(parts, " ")
	if len(c.People) > 0 {
		s += " with " + joinList(c.People, "and")
	}
	if c.FreeText != "" {
		s += " about " + c.FreeText
	}
	s += describeYears(c.MinYear, c.MaxYear)
	return s
}

// describeYears is " from 2010 on", " up to 1979", " from the 1990s", " from
// 1994" or " from 1990 to 2000".
func describeYears(lo, hi *int) string {
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		return fmt.Sprintf(" from %d", *lo)
	case lo != nil && hi != nil && *lo%10 == 0 && *hi == *lo+9:
		return fmt.Sprintf(" from the %ds", *lo)
	case lo != nil && hi != nil:
		return fmt.Sprintf(" from %d to %d", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf(" from %d on", *lo)
	case hi != nil:
		return fmt.Sprintf(" up to %d", *hi)
	}
	return ""
}

func pick(one bool, singular, plural string) string {
	if one {
		return singular
	}
	return plural
}

func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Small-talk kinds the reply writer answers.
var (
	greetingWords = set("hi", "hello", "hey", "hiya", "howdy", "yo", "sup", "morning", "evening")
	thanksWords   = set("thanks", "thank", "thx", "ty", "cheers", "appreciate", "appreciated")
	byeWords      = set("bye", "goodbye", "night", "later", "ya")
)

// talkReply answers a turn that needed no search.
func (m *Model) talkReply(in memento.ReplyInput) string {
	toks := tokenize(in.Message)
	q := in.Question
	switch {
	case isHelpQuestion(toks) || (q != "" && isHelpQuestion(tokenize(q))):
		return helpText
	case isTitleQuestion(toks) || (q != "" && isTitleQuestion(tokenize(q))):
		return titleAnswer(in.Titles)
	}
	var negated []string
	for _, h := range m.findGenres(toks) {
		if h.negated {
			for _, g := range h.genres {
				negated = appendNew(negated, strings.ToLower(g))
			}
		}
	}
	if len(negated) > 0 {
		return fmt.Sprintf("Got it, no %s. What would you like instead? A genre, an era or an actor is enough to start.", joinList(negated, "or"))
	}
	if isSmallTalk(toks) {
		has := func(ws map[string]bool) bool {
			for _, t := range toks {
				if ws[t.w] {
					return true
				}
			}
			return false
		}
		switch {
		case has(byeWords) && !has(greetingWords):
			return "Bye! Enjoy what you watch, and come back any time."
		case has(thanksWords):
			return "You're welcome! Ask for more whenever you like, or say \"not those\" for different ones."
		case has(greetingWords):
			return "Hi! What would you like to watch? Tell me a genre, an era, an actor, or whether you want a movie or a series, for example \"3 comedy movies from the 90s\"."
		}
		return "Great! Ask for more whenever you like, or say \"not those\" for different ones."
	}
	return "Sorry, I didn't catch what you'd like to watch. Try something like \"3 comedy movies from the 90s\", \"a science fiction series\" or \"something recent\"."
}

// titleAnswer answers a question about the titles just shown from what the
// catalog says of them.
func titleAnswer(titles []memento.Title) string {
	if len(titles) == 0 {
		return "I can only tell you what the catalog says about titles I've shown you. Ask me for recommendations and I'll list them with their years and genres."
	}
	var b strings.Builder
	for i, t := range titles {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(t.Title)
		if t.Year > 0 {
			fmt.Fprintf(&b, " (%d)", t.Year)
		}
		b.WriteString(" " + describeKind(t))
		if len(t.Cast) > 0 {
			cast := t.Cast
			if len(cast) > 3 {
				cast = cast[:3]
			}
			fmt.Fprintf(&b, " with %s", joinList(cast, "and"))
		}
		b.WriteString(".")
	}
	return b.String()
}

// article is "a" or "an" for the word that follows.
func article(next string) string {
	if next != "" && strings.ContainsRune("aeiouAEIOU", rune(next[0])) {
		return "an"
	}
	return "a"
}
