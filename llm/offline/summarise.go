package offline

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// defaultSummaryChars bounds a summary when the caller gives no limit.
const defaultSummaryChars = 1200

// summaryMaxWords bounds a summary whatever the length of the thread: it
// is what a later turn needs to know, not a transcript, so it must not
// grow with every turn.
const summaryMaxWords = 120

// How many items of each kind a summary keeps, newest first. Older ones
// are counted ("and 4 more") or, for what the user said about themselves,
// left to long-term memory, which keeps every fact with its source.
const (
	summaryMaxTitles = 8
	summaryMaxGenres = 6
	summaryMaxPeople = 4
	summaryMaxFacts  = 6
	summaryMaxSoft   = 3
)

// The labels of a summary's lines. A previous summary is read back by
// them, so they are part of the format.
const (
	wantsLabel  = "Wants: "
	downLabel   = "Turned down: "
	selfLabel   = "Said about themselves: "
	downGenres  = "genres "
	downTitles  = "titles "
	downPeople  = "people "
	softPrefix  = "ideally "
	likePrefix  = "like "
	withPrefix  = "with "
	aboutPrefix = "about "
)

// Summarise folds an exchange into a thread's running summary. The
// summary is not a transcript but the thread's state in at most three
// lines: what the user wants now (the constraints in force, as the active
// context has them: each turn's understanding is applied to the previous
// summary's wants, so a newer wish replaces the one it conflicts with),
// what they turned down (genres, titles, people), and what they said about
// themselves (facts, the newest of each topic). Each line keeps a bounded
// number of items, so the summary stays under summaryMaxWords however long
// the thread, and under MaxChars.
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
	st := parseSummary(in.Previous)
	for _, msg := range st.legacy {
		m.fold(ctx, &st, msg)
	}
	st.legacy = nil
	for _, msg := range in.Messages {
		m.fold(ctx, &st, msg)
	}
	return st.render(limit), nil
}

// summaryState is what a summary says, as items that can be folded.
type summaryState struct {
	// What the user wants: the constraints in force.
	wants memento.ActiveContext
	like  []string
	soft  []string
	// What they turned down, oldest first; moreTitles counts the titles
	// turned down earlier that the summary no longer names.
	downGenres []string
	downTitles []string
	downPeople []string
	moreTitles int
	// What they said about themselves, oldest first.
	facts []string
	// shown are the titles of the newest answer, for "not those" and "the
	// second one"; they are not written into the summary.
	shown []memento.Title
	// legacy are the sentences of a previous summary written in another
	// format (by an older version or another model), read as the user's.
	legacy []memento.Message
}

// fold applies one message to the state: an answer tells which titles
// were shown, a user's turn is read as a request and for facts.
func (m *Model) fold(ctx context.Context, st *summaryState, msg memento.Message) {
	if msg.Role == memento.RoleAssistant {
		if shown := listedTitles(msg.Text); len(shown) > 0 {
			st.shown = shown
		}
		return
	}
	text := strings.TrimSpace(msg.Text)
	if text == "" {
		return
	}
	u, err := m.UnderstandRequest(ctx, memento.UnderstandInput{Message: text, Context: st.wants.Clone(), LastShown: st.shown})
	if err == nil && u != nil {
		st.apply(*u)
	}
	for _, f := range extractFacts(text) {
		st.addFact(f.Text)
	}
}

// apply changes the wants as the agent changes the active context, and
// adds what the turn turned down. Unlike the active context, what was
// turned down outlives a new request: it is still true of the user.
func (st *summaryState) apply(u memento.Understanding) {
	if !u.Search {
		return
	}
	w := &st.wants
	if u.Replace {
		*w = memento.NewActiveContext()
		st.like, st.soft = nil, nil
	}
	if u.Reject {
		for _, t := range st.shown {
			st.turnDown(titleName(t))
		}
	}
	for _, r := range u.RejectTitles {
		st.turnDown(st.resolve(r))
	}
	for _, r := range u.Seen {
		st.turnDown(st.resolve(r))
	}
	if u.Like != nil {
		st.like = nil
		for _, r := range u.Like {
			if name := st.resolve(r); name != "" {
				st.like = appendNewFold(st.like, name)
			}
		}
	}
	if u.Genres != nil {
		w.Genres = slices.Clone(u.Genres)
		st.downGenres = slices.DeleteFunc(st.downGenres, func(g string) bool { return containsFoldStr(w.Genres, g) })
	}
	for _, g := range u.ExcludeGenres {
		st.downGenres = appendNewest(st.downGenres, g, summaryMaxGenres)
		w.Genres = slices.DeleteFunc(w.Genres, func(x string) bool { return strings.EqualFold(x, g) })
	}
	if u.TitleType != "" {
		w.TitleType = u.TitleType
	}
	if u.People != nil {
		for _, p := range w.People {
			if !containsFoldStr(u.People, p) && len(u.People) < len(w.People) && !u.Replace {
				// "not Tom Hanks" takes a person out of the ones in force.
				st.downPeople = appendNewest(st.downPeople, p, summaryMaxPeople)
			}
		}
		w.People = slices.Clone(u.People)
		if len(w.People) > summaryMaxPeople {
			w.People = w.People[len(w.People)-summaryMaxPeople:]
		}
	}
	if u.FreeText != "" {
		w.FreeText = strings.TrimSpace(u.FreeText)
	}
	if u.IsAdult != nil {
		w.IsAdult = *u.IsAdult
	}
	if u.Count > 0 {
		w.Count = u.Count
	}
	if u.MinYear != nil || u.MaxYear != nil {
		lo, hi := w.MinYear, w.MaxYear
		if u.MinYear != nil {
			lo = intPtr(*u.MinYear)
			if u.MaxYear == nil && hi != nil && *hi < *lo {
				hi = nil
			}
		}
		if u.MaxYear != nil {
			hi = intPtr(*u.MaxYear)
			if u.MinYear == nil && lo != nil && *lo > *hi {
				lo = nil
			}
		}
		w.MinYear, w.MaxYear = lo, hi
	}
	st.shiftYears(u.YearShift)
	for _, s := range u.Soft {
		said := strings.TrimSpace(s.Said)
		if said == "" {
			said = strings.TrimSpace(s.Value)
		}
		if said != "" {
			st.soft = appendNewest(st.soft, said, summaryMaxSoft)
		}
	}
}

// shiftYears moves the year window past the titles shown, as "older" and
// "newer" do: a closed window keeps its width.
func (st *summaryState) shiftYears(shift string) {
	if shift == "" {
		return
	}
	lo, hi := 0, 0
	for _, t := range st.shown {
		if t.Year == 0 {
			continue
		}
		if lo == 0 || t.Year < lo {
			lo = t.Year
		}
		if t.Year > hi {
			hi = t.Year
		}
	}
	if lo == 0 {
		return
	}
	w := &st.wants
	width := -1
	if w.MinYear != nil && w.MaxYear != nil {
		width = *w.MaxYear - *w.MinYear
	}
	switch shift {
	case "older":
		w.MaxYear = intPtr(lo - 1)
		w.MinYear = nil
		if width >= 0 {
			w.MinYear = intPtr(lo - 1 - width)
		}
	case "newer":
		w.MinYear = intPtr(hi + 1)
		w.MaxYear = nil
		if width >= 0 {
			w.MaxYear = intPtr(hi + 1 + width)
		}
	}
}

// resolve names a referenced title: by its position in the newest answer,
// or by its name, written as the answer wrote it when it showed it.
func (st *summaryState) resolve(r memento.TitleRef) string {
	n := len(st.shown)
	switch {
	case r.Position > 0 && r.Position <= n:
		return titleName(st.shown[r.Position-1])
	case r.Position < 0 && -r.Position <= n:
		return titleName(st.shown[n+r.Position])
	}
	name := strings.TrimSpace(r.Name)
	for _, t := range st.shown {
		if name != "" && strings.EqualFold(t.Title, name) {
			return titleName(t)
		}
	}
	return name
}

// turnDown adds a title to those turned down; when the oldest must make
// room it is counted, not named.
func (st *summaryState) turnDown(name string) {
	name = clean(name)
	if name == "" {
		return
	}
	if !containsFoldStr(st.downTitles, name) && len(st.downTitles) >= summaryMaxTitles {
		st.moreTitles++
	}
	st.downTitles = appendNewest(st.downTitles, name, summaryMaxTitles)
}

// addFact keeps a fact about the user. A fact on the topic of an older one
// ("can't stand horror" after "loves horror") replaces it: the newest
// word counts.
func (st *summaryState) addFact(text string) {
	text = clean(text)
	if text == "" {
		return
	}
	topic := topicStems(text)
	st.facts = slices.DeleteFunc(st.facts, func(f string) bool {
		return strings.EqualFold(f, text) || len(topic) > 0 && sameStems(topicStems(f), topic)
	})
	st.facts = append(st.facts, text)
	if len(st.facts) > summaryMaxFacts {
		st.facts = st.facts[len(st.facts)-summaryMaxFacts:]
	}
}

func sameStems(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// render writes the state in its three lines, leaving out the oldest
// items until it fits summaryMaxWords and limit bytes.
func (st *summaryState) render(limit int) string {
	s := *st
	s.facts = slices.Clone(st.facts)
	s.downTitles = slices.Clone(st.downTitles)
	s.downGenres = slices.Clone(st.downGenres)
	s.soft = slices.Clone(st.soft)
	for {
		out := s.text()
		if len(strings.Fields(out)) <= summaryMaxWords && len(out) <= limit {
			return out
		}
		// The oldest of what can go goes first: facts (long-term memory
		// keeps them), then titles turned down (counted), then the rest.
		switch {
		case len(s.facts) > 1:
			s.facts = s.facts[1:]
		case len(s.downTitles) > 1:
			s.downTitles = s.downTitles[1:]
			s.moreTitles++
		case len(s.soft) > 0:
			s.soft = s.soft[1:]
		case len(s.downGenres) > 1:
			s.downGenres = s.downGenres[1:]
		default:
			return truncateWords(out, limit)
		}
	}
}

// text writes the summary's lines; a part with nothing to say is left out.
func (st *summaryState) text() string {
	var lines []string
	if wants := st.wantsItems(); len(wants) > 0 {
		lines = append(lines, wantsLabel+strings.Join(wants, "; ")+".")
	}
	var down []string
	if len(st.downGenres) > 0 {
		down = append(down, downGenres+strings.Join(st.downGenres, ", "))
	}
	if len(st.downTitles) > 0 {
		t := downTitles + strings.Join(st.downTitles, ", ")
		if st.moreTitles > 0 {
			t += " and " + strconv.Itoa(st.moreTitles) + " more"
		}
		down = append(down, t)
	}
	if len(st.downPeople) > 0 {
		down = append(down, downPeople+strings.Join(st.downPeople, ", "))
	}
	if len(down) > 0 {
		lines = append(lines, downLabel+strings.Join(down, "; ")+".")
	}
	if len(st.facts) > 0 {
		lines = append(lines, selfLabel+strings.Join(st.facts, "; ")+".")
	}
	return strings.Join(lines, "\n")
}

// wantsItems are the constraints in force, each readable on its own and
// read back by parseWants.
func (st *summaryState) wantsItems() []string {
	w := st.wants
	var out []string
	if len(w.Genres) > 0 {
		out = append(out, strings.Join(w.Genres, ", "))
	}
	if w.TitleType != "" {
		out = append(out, typeItem(w.TitleType))
	}
	if y := strings.TrimSpace(describeYears(w.MinYear, w.MaxYear)); y != "" {
		out = append(out, y)
	}
	if len(w.People) > 0 {
		out = append(out, withPrefix+strings.Join(w.People, ", "))
	}
	if w.FreeText != "" {
		out = append(out, aboutPrefix+"“"+clean(w.FreeText)+"”")
	}
	if len(st.like) > 0 {
		out = append(out, likePrefix+strings.Join(st.like, ", "))
	}
	if len(st.soft) > 0 {
		out = append(out, softPrefix+strings.Join(st.soft, ", "))
	}
	if w.IsAdult {
		out = append(out, "adult titles")
	}
	if w.Count > 0 && w.Count != memento.NewActiveContext().Count {
		out = append(out, strconv.Itoa(w.Count)+" at a time")
	}
	return out
}

func typeItem(t string) string {
	switch t {
	case memento.TypeMovie:
		return "movies only"
	case memento.TypeTVSeries:
		return "series only"
	}
	return t + " only"
}

// parseSummary reads a summary back into its items. Lines it does not
// know (a summary of an older format, or one another model wrote) become
// messages to fold again, so nothing the user said is lost on the way.
func parseSummary(text string) summaryState {
	st := summaryState{wants: memento.NewActiveContext()}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, wantsLabel):
			st.parseWants(strings.TrimSuffix(strings.TrimPrefix(line, wantsLabel), "."))
		case strings.HasPrefix(line, downLabel):
			st.parseDown(strings.TrimSuffix(strings.TrimPrefix(line, downLabel), "."))
		case strings.HasPrefix(line, selfLabel):
			for _, f := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, selfLabel), "."), "; ") {
				st.addFact(f)
			}
		default:
			if rest, ok := strings.CutPrefix(line, "Agent: "); ok {
				st.legacy = append(st.legacy, memento.Message{Role: memento.RoleAssistant, Text: rest})
				continue
			}
			for _, s := range splitSentences(strings.TrimPrefix(line, "User: ")) {
				st.legacy = append(st.legacy, memento.Message{Role: memento.RoleUser, Text: s})
			}
		}
	}
	return st
}

var (
	yearsFrom   = regexp.MustCompile(`^from (\d{1,4})(?: to (\d{1,4})| on)?$`)
	yearsDecade = regexp.MustCompile(`^from the (\d{1,4})s$`)
	yearsUpTo   = regexp.MustCompile(`^up to (\d{1,4})$`)
	countItem   = regexp.MustCompile(`^(\d+) at a time$`)
	moreSuffix  = regexp.MustCompile(` and (\d+) more$`)
)

// parseWants reads the items wantsItems writes.
func (st *summaryState) parseWants(line string) {
	w := &st.wants
	num := func(s string) *int {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil
		}
		return &n
	}
	for i, item := range strings.Split(line, "; ") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
		case strings.HasSuffix(item, " only"):
			switch t := strings.TrimSuffix(item, " only"); t {
			case "movies":
				w.TitleType = memento.TypeMovie
			case "series":
				w.TitleType = memento.TypeTVSeries
			default:
				w.TitleType = t
			}
		case yearsDecade.MatchString(item):
			lo := num(yearsDecade.FindStringSubmatch(item)[1])
			if lo != nil {
				w.MinYear, w.MaxYear = lo, intPtr(*lo+9)
			}
		case yearsFrom.MatchString(item):
			g := yearsFrom.FindStringSubmatch(item)
			w.MinYear = num(g[1])
			switch {
			case g[2] != "":
				w.MaxYear = num(g[2])
			case strings.HasSuffix(item, " on"):
				w.MaxYear = nil
			default:
				w.MaxYear = num(g[1])
			}
		case yearsUpTo.MatchString(item):
			w.MaxYear = num(yearsUpTo.FindStringSubmatch(item)[1])
		case countItem.MatchString(item):
			if n := num(countItem.FindStringSubmatch(item)[1]); n != nil && *n > 0 {
				w.Count = clampCount(*n)
			}
		case strings.HasPrefix(item, withPrefix):
			w.People = splitList(strings.TrimPrefix(item, withPrefix))
		case strings.HasPrefix(item, aboutPrefix):
			w.FreeText = strings.Trim(strings.TrimPrefix(item, aboutPrefix), "“”\"")
		case strings.HasPrefix(item, likePrefix):
			st.like = splitList(strings.TrimPrefix(item, likePrefix))
		case strings.HasPrefix(item, softPrefix):
			st.soft = splitList(strings.TrimPrefix(item, softPrefix))
		case item == "adult titles":
			w.IsAdult = true
		case i == 0:
			w.Genres = splitList(item)
		}
	}
}

// parseDown reads the line of what was turned down.
func (st *summaryState) parseDown(line string) {
	for _, part := range strings.Split(line, "; ") {
		switch {
		case strings.HasPrefix(part, downGenres):
			st.downGenres = splitList(strings.TrimPrefix(part, downGenres))
		case strings.HasPrefix(part, downTitles):
			rest := strings.TrimPrefix(part, downTitles)
			if g := moreSuffix.FindStringSubmatch(rest); g != nil {
				st.moreTitles, _ = strconv.Atoi(g[1])
				rest = strings.TrimSuffix(rest, g[0])
			}
			st.downTitles = splitList(rest)
		case strings.HasPrefix(part, downPeople):
			st.downPeople = splitList(strings.TrimPrefix(part, downPeople))
		}
	}
}

// listLine is a numbered line of an answer: "2. Heat (1995): Crime".
var listLine = regexp.MustCompile(`^\s*\d{1,2}[.)]\s+(.+?)(?:\s+\((\d{4})\))?(?::.*|\s+[-–—]\s.*)?$`)

// listedTitles reads the titles an answer listed, by name and year.
func listedTitles(text string) []memento.Title {
	var out []memento.Title
	for _, line := range strings.Split(text, "\n") {
		g := listLine.FindStringSubmatch(line)
		if g == nil {
			continue
		}
		t := memento.Title{Title: strings.Trim(strings.TrimSpace(g[1]), "*\"“”")}
		if g[2] != "" {
			t.Year, _ = strconv.Atoi(g[2])
		}
		if t.Title != "" {
			out = append(out, t)
		}
	}
	return out
}

// titleName is "Heat (1995)".
func titleName(t memento.Title) string {
	if t.Year > 0 {
		return t.Title + " (" + strconv.Itoa(t.Year) + ")"
	}
	return t.Title
}

// clean makes text safe for an item: one line, no item separator.
func clean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, ";", ",")
	return strings.Trim(s, " ,.")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ", ") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// appendNewest adds v to list (moving it to the end if it is there) and
// keeps the newest max.
func appendNewest(list []string, v string, max int) []string {
	list = slices.DeleteFunc(list, func(x string) bool { return strings.EqualFold(x, v) })
	list = append(list, v)
	if len(list) > max {
		list = list[len(list)-max:]
	}
	return list
}

func appendNewFold(list []string, v string) []string {
	if containsFoldStr(list, v) {
		return list
	}
	return append(list, v)
}

func containsFoldStr(list []string, v string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, v) })
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
