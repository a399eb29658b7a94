package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// defaultSummaryChars bounds a summary when the caller gives no limit.
const defaultSummaryChars = 1200

// minSalience is the score a sentence needs to be kept: a request, a
// constraint, a title or a preference scores above it, small talk below.
const minSalience = 2

// Summarise folds an exchange into a thread's running summary by
// extraction: every sentence of the previous summary and of the messages is
// scored for salience (requests, constraints, titles, preferences,
// rejections; small talk scores low), the best are kept while they fit in
// MaxChars, newer sentences winning ties, and they are written back in the
// order they were said, each message's under its speaker.
func (m *Model) Summarise(ctx context.Context, in memento.SummariseInput) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("summarise: %w", err)
	}
	if in.MaxChars < 0 {
		return "", memento.Errorf(memento.EINVALID, "Summary limit %d is negative.", in.MaxChars)
	}
	limit := in.MaxChars
	if limit == 0 {
		limit = defaultSummaryChars
	}
	return m.summarise(in, limit), nil
}

// sentence is one candidate of a summary.
type sentence struct {
	text  string
	group int // 0 for the previous summary, i+1 for message i
	order int // position in the thread: later is newer
	score float64
}

func (m *Model) summarise(in memento.SummariseInput, limit int) string {
	var cands []sentence
	order := 0
	for _, s := range splitSentences(in.Previous) {
		// A previous summary's lines start with their speaker.
		body, role := s, memento.Role("")
		if rest, ok := strings.CutPrefix(s, "User: "); ok {
			body, role = rest, memento.RoleUser
		} else if rest, ok := strings.CutPrefix(s, "Agent: "); ok {
			body, role = rest, memento.RoleAssistant
		}
		cands = append(cands, sentence{text: s, group: 0, order: order, score: m.salience(body, role) + 1})
		order++
	}
	for i, msg := range in.Messages {
		for _, s := range splitSentences(msg.Text) {
			cands = append(cands, sentence{text: s, group: i + 1, order: order, score: m.salience(s, msg.Role)})
			order++
		}
	}
	if len(cands) == 0 {
		return ""
	}
	ranked := slices.Clone(cands)
	slices.SortStableFunc(ranked, func(a, b sentence) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return b.order - a.order // newest wins ties
	})
	chosen := map[int]bool{}
	seen := map[string]bool{}
	for _, c := range ranked {
		if seen[strings.ToLower(c.text)] || c.score < minSalience && len(chosen) > 0 {
			continue // small talk goes, unless nothing else was said
		}
		chosen[c.order] = true
		if len(m.layout(in, cands, chosen)) > limit {
			delete(chosen, c.order)
			continue
		}
		seen[strings.ToLower(c.text)] = true
	}
	out := m.layout(in, cands, chosen)
	if out == "" {
		// Not even the best sentence fits: cut it at a word.
		out = truncateWords(ranked[0].text, limit)
	}
	return out
}

// layout writes the chosen sentences in thread order: the previous
// summary's first, then each message's after its speaker.
func (m *Model) layout(in memento.SummariseInput, cands []sentence, chosen map[int]bool) string {
	var lines []string
	var cur []string
	curGroup := -1
	flush := func() {
		if len(cur) == 0 {
			return
		}
		line := strings.Join(cur, " ")
		if curGroup > 0 {
			line = speaker(in.Messages[curGroup-1].Role) + ": " + line
		}
		lines = append(lines, line)
		cur = nil
	}
	for _, c := range cands {
		if !chosen[c.order] {
			continue
		}
		if c.group != curGroup {
			flush()
			curGroup = c.group
		}
		cur = append(cur, c.text)
	}
	flush()
	return strings.Join(lines, "\n")
}

func speaker(r memento.Role) string {
	if r == memento.RoleAssistant {
		return "Agent"
	}
	return "User"
}

// salience scores a sentence: what a later turn needs to know scores high.
func (m *Model) salience(s string, role memento.Role) float64 {
	toks := tokenize(s)
	if len(toks) == 0 {
		return -5
	}
	score := 0.0
	if role == memento.RoleUser {
		score++
	}
	if hasAny(toks, requestList) || imperatives[toks[0].w] && !questionStarts[toks[0].w] {
		score += 3
	}
	if len(m.findGenres(toks)) > 0 {
		score += 2
	}
	if ys := m.findYears(s, toks); ys.min != 0 || ys.max != 0 || ys.shift != "" {
		score += 2
	}
	if len(m.findPeople(toks)) > 0 {
		score += 2
	}
	if titleType(toks) != "" || findCount(toks) > 0 {
		score++
	}
	if mentionsTitles(s, toks) {
		score += 2
	}
	if len(extractFacts(s)) > 0 || len(extractPreferences(s)) > 0 {
		score += 3
	}
	if isReject(toks) {
		score += 2
	}
	if isSmallTalk(toks) {
		score -= 4
	}
	if len(toks) < 3 {
		score--
	}
	return score
}

// mentionsTitles reports a title in a sentence: a year in parentheses or
// a run of capitalised words inside it.
func mentionsTitles(s string, toks []token) bool {
	for _, t := range toks {
		if t.paren && len(t.w) == 4 && isDigits(t.w) {
			return true
		}
	}
	run := 0
	for i, t := range toks {
		if i > 0 && t.brk == 0 && startsUpper(t.raw) && t.w != "i" {
			run++
			if run >= 2 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// splitSentences cuts text into sentences at ., ! and ? followed by a
// space, and at line breaks.
func splitSentences(text string) []string {
	var out []string
	start := 0
	add := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			add(i)
		case '.', '!', '?':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' {
				// "Dr. Who" and "L. Jackson" are not ends.
				if text[i] == '.' && i >= 2 && text[i-2] == ' ' {
					continue
				}
				add(i + 1)
			}
		}
	}
	add(len(text))
	return out
}

// truncateWords cuts s at a word so that it and "..." fit in limit bytes.
func truncateWords(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	if limit <= 3 {
		return ""
	}
	cut := s[:limit-3]
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	// Do not end inside a multi-byte letter.
	for len(cut) > 0 {
		r, size := utf8.DecodeLastRuneInString(cut)
		if r != utf8.RuneError || size != 1 {
			break
		}
		cut = cut[:len(cut)-1]
	}
	return strings.TrimRight(cut, " ,;:") + "..."
}
