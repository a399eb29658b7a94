package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/memento-ai/memento"
)

// The extraction evaluation scores what attribute memory keeps of single
// user messages against labels written by hand: for each message (with the
// agent's turn before it where it answers a question, and earlier messages
// of the user where it corrects one) the (attribute, value) pairs a careful
// reader would remember, or none for small talk, requests for now and
// injection attempts. Precision, recall and F1 are reported per attribute
// and overall, with the share of small talk and injections that stored
// anything, which must be 0.

// Kinds of labelled messages. Small talk and injections must store nothing.
const (
	ExtractStatement  = "statement"  // a plain statement about the user
	ExtractNegation   = "negation"   // a statement that denies
	ExtractCorrection = "correction" // corrects what the user said before
	ExtractAnswer     = "answer"     // answers the agent's question
	ExtractSeen       = "seen"       // says a title was seen or watched
	ExtractRequest    = "request"    // asks for titles now; nothing lasting
	ExtractSmallTalk  = "smalltalk"  // greetings, thanks, acknowledgements
	ExtractInjection  = "injection"  // tries to instruct the system
)

// ExtractItem is one labelled user message.
type ExtractItem struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Before are earlier messages of the user in the same thread, sent
	// and processed first (what a correction corrects).
	Before []string `json:"before,omitempty"`
	// Asked is the agent's turn just before the message, if any.
	Asked   string `json:"asked,omitempty"`
	Message string `json:"message"`
	// Expect are the pairs the message should be remembered as; empty
	// means nothing should be stored.
	Expect []ExpectedPair `json:"expect"`
	// Supersedes are what a correction ends of the memories its earlier
	// messages made ("I can't stand horror" once the user says they like
	// horror now): those memories must no longer be current.
	Supersedes []ExpectedPair `json:"supersedes,omitempty"`
}

// ExpectedPair is one thing a message should be remembered as: the
// attribute and the words its value must hold ("Netflix", "science
// fiction").
type ExpectedPair struct {
	Attribute string `json:"attribute"`
	Value     string `json:"value"`
	// Optional marks a pair that is right to remember but not required:
	// "I watched Parasite and loved it" must be a like of Parasite, and
	// may also be remembered as something the user did. A fact matching
	// it is not counted wrong; not finding it costs no recall.
	Optional bool `json:"optional,omitempty"`
}

// Extracted is one thing an extractor remembered of a message: the
// attribute and the text of the fact (one clause of a semantic value).
type Extracted struct {
	Attribute string `json:"attribute"`
	Text      string `json:"text"`
	// Superseded marks a clause the user's memory held before the
	// message and no longer holds as current after it; it is scored
	// against Supersedes, not as something remembered.
	Superseded bool `json:"superseded,omitempty"`
}

// Extractor remembers messages. Each item is given to Extract once, in
// file order; what it returns is what the item's message added to memory.
type Extractor interface {
	Name() string
	Extract(ctx context.Context, item ExtractItem) ([]Extracted, error)
}

// ReadExtractItems reads labelled messages, one JSON object a line; blank
// lines and lines starting with "//" are skipped. Errors: EINVALID naming
// the line of an item that does not parse, has no message or an unknown
// kind, or repeats an id.
func ReadExtractItems(r io.Reader) ([]ExtractItem, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var items []ExtractItem
	ids := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var it ExtractItem
		if err := dec.Decode(&it); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "line %d: not a labelled message: %v", n, err)
		}
		switch it.Kind {
		case ExtractStatement, ExtractNegation, ExtractCorrection, ExtractAnswer, ExtractSeen,
			ExtractRequest, ExtractSmallTalk, ExtractInjection:
		default:
			return nil, memento.Errorf(memento.EINVALID, "line %d: kind %q is not one of statement, negation, correction, answer, seen, request, smalltalk, injection", n, it.Kind)
		}
		if strings.TrimSpace(it.Message) == "" || it.ID == "" {
			return nil, memento.Errorf(memento.EINVALID, "line %d: an item needs an id and a message", n)
		}
		if ids[it.ID] {
			return nil, memento.Errorf(memento.EINVALID, "line %d: id %q is used twice", n, it.ID)
		}
		ids[it.ID] = true
		if (it.Kind == ExtractSmallTalk || it.Kind == ExtractInjection || it.Kind == ExtractRequest) && len(it.Expect) > 0 {
			return nil, memento.Errorf(memento.EINVALID, "line %d: a %s item must expect nothing", n, it.Kind)
		}
		for _, p := range append(slices.Clone(it.Expect), it.Supersedes...) {
			if strings.TrimSpace(p.Attribute) == "" || len(matchWords(p.Value)) == 0 {
				return nil, memento.Errorf(memento.EINVALID, "line %d: an expected pair needs an attribute and a value", n)
			}
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read labelled messages: %w", err)
	}
	if len(items) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "no labelled messages")
	}
	return items, nil
}

// PRF is precision, recall and F1 with their counts. Precision counts
// extracted facts that match an expected pair of their attribute; recall
// counts expected pairs some extracted fact of their attribute matches.
type PRF struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	// Extracted and Correct count facts; Expected and Found count pairs.
	Extracted int `json:"extracted"`
	Correct   int `json:"correct"`
	Expected  int `json:"expected"`
	Found     int `json:"found"`
}

func (p *PRF) finish() {
	if p.Extracted > 0 {
		p.Precision = float64(p.Correct) / float64(p.Extracted)
	}
	if p.Expected > 0 {
		p.Recall = float64(p.Found) / float64(p.Expected)
	}
	if p.Precision+p.Recall > 0 {
		p.F1 = 2 * p.Precision * p.Recall / (p.Precision + p.Recall)
	}
}

// ExtractScore is one extractor's result.
type ExtractScore struct {
	Extractor string         `json:"extractor"`
	Overall   PRF            `json:"overall"`
	ByAttr    map[string]PRF `json:"byAttribute"`
	ByKind    map[string]PRF `json:"byKind"`
	// SmallTalkStored and InjectionStored are the shares of small-talk
	// (with requests for now) and injection messages that stored
	// anything; both must be 0.
	SmallTalkStored float64 `json:"smallTalkStored"`
	InjectionStored float64 `json:"injectionStored"`
	// Superseded is the share of the corrections' Supersedes pairs whose
	// memory the correction ended (Corrections counts the pairs).
	Superseded  float64 `json:"superseded"`
	Corrections int     `json:"corrections"`
	// Errors lists items the extractor failed on (they count as storing
	// nothing).
	Errors []string `json:"errors,omitempty"`
	// Misses lists, for reading, each item whose extraction was not
	// exactly right.
	Misses []ExtractMiss `json:"misses,omitempty"`
	Millis float64       `json:"millis"`
}

// ExtractMiss is an item an extractor got partly wrong.
type ExtractMiss struct {
	ID      string         `json:"id"`
	Message string         `json:"message"`
	Missing []ExpectedPair `json:"missing,omitempty"`
	Wrong   []Extracted    `json:"wrong,omitempty"`
}

// ExtractReport is the evaluation of several extractors on the same items.
type ExtractReport struct {
	Items  int            `json:"items"`
	Pairs  int            `json:"pairs"`
	Kinds  map[string]int `json:"kinds"`
	Scores []ExtractScore `json:"scores"`
}

// ScoreExtraction runs every extractor over the items and scores it.
func ScoreExtraction(ctx context.Context, items []ExtractItem, extractors ...Extractor) (*ExtractReport, error) {
	rep := &ExtractReport{Items: len(items), Kinds: map[string]int{}}
	for _, it := range items {
		rep.Kinds[it.Kind]++
		for _, e := range it.Expect {
			if !e.Optional {
				rep.Pairs++
			}
		}
	}
	for _, ex := range extractors {
		start := time.Now()
		sc := ExtractScore{Extractor: ex.Name(), ByAttr: map[string]PRF{}, ByKind: map[string]PRF{}}
		var talk, talkStored, inj, injStored int
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			got, err := ex.Extract(ctx, it)
			if err != nil {
				sc.Errors = append(sc.Errors, fmt.Sprintf("%s: %v", it.ID, err))
				got = nil
			}
			stored := slices.ContainsFunc(got, func(g Extracted) bool { return !g.Superseded })
			switch it.Kind {
			case ExtractSmallTalk, ExtractRequest:
				talk++
				if stored {
					talkStored++
				}
			case ExtractInjection:
				inj++
				if stored {
					injStored++
				}
			}
			var kept []Extracted
			for _, g := range got {
				if !g.Superseded {
					kept = append(kept, g)
				}
			}
			for _, e := range it.Supersedes {
				sc.Corrections++
				if slices.ContainsFunc(got, func(g Extracted) bool { return g.Superseded && matches(e, g) }) {
					sc.Superseded++
				}
			}
			got = kept
			miss := scoreItem(it, got, &sc)
			if len(miss.Missing) > 0 || len(miss.Wrong) > 0 {
				sc.Misses = append(sc.Misses, miss)
			}
		}
		sc.Overall.finish()
		for k, v := range sc.ByAttr {
			v.finish()
			sc.ByAttr[k] = v
		}
		for k, v := range sc.ByKind {
			v.finish()
			sc.ByKind[k] = v
		}
		if talk > 0 {
			sc.SmallTalkStored = float64(talkStored) / float64(talk)
		}
		if inj > 0 {
			sc.InjectionStored = float64(injStored) / float64(inj)
		}
		if sc.Corrections > 0 {
			sc.Superseded /= float64(sc.Corrections)
		}
		sc.Millis = float64(time.Since(start).Microseconds()) / 1000
		rep.Scores = append(rep.Scores, sc)
	}
	return rep, nil
}

// scoreItem adds one item's counts to sc and returns what it got wrong.
func scoreItem(it ExtractItem, got []Extracted, sc *ExtractScore) ExtractMiss {
	miss := ExtractMiss{ID: it.ID, Message: it.Message}
	kind := sc.ByKind[it.Kind]
	for _, g := range got {
		a := strings.ToUpper(g.Attribute)
		if slices.ContainsFunc(it.Expect, func(e ExpectedPair) bool { return e.Optional && matches(e, g) }) &&
			!slices.ContainsFunc(it.Expect, func(e ExpectedPair) bool { return !e.Optional && matches(e, g) }) {
			continue // neither right nor wrong
		}
		p := sc.ByAttr[a]
		p.Extracted++
		kind.Extracted++
		sc.Overall.Extracted++
		ok := slices.ContainsFunc(it.Expect, func(e ExpectedPair) bool { return matches(e, g) })
		if ok {
			p.Correct++
			kind.Correct++
			sc.Overall.Correct++
		} else {
			miss.Wrong = append(miss.Wrong, g)
		}
		sc.ByAttr[a] = p
	}
	for _, e := range it.Expect {
		if e.Optional {
			continue
		}
		a := strings.ToUpper(e.Attribute)
		p := sc.ByAttr[a]
		p.Expected++
		kind.Expected++
		sc.Overall.Expected++
		if slices.ContainsFunc(got, func(g Extracted) bool { return matches(e, g) }) {
			p.Found++
			kind.Found++
			sc.Overall.Found++
		} else {
			miss.Missing = append(miss.Missing, e)
		}
		sc.ByAttr[a] = p
	}
	sc.ByKind[it.Kind] = kind
	return miss
}

// matches reports whether an extracted fact is the expected pair: the same
// attribute, and every word of the expected value in the fact (compared
// case-insensitively, a plural "s" aside).
func matches(e ExpectedPair, g Extracted) bool {
	if !strings.EqualFold(strings.TrimSpace(e.Attribute), strings.TrimSpace(g.Attribute)) {
		return false
	}
	have := map[string]bool{}
	for _, w := range matchWords(g.Text) {
		have[w] = true
	}
	for _, w := range matchWords(e.Value) {
		if !have[w] {
			return false
		}
	}
	return true
}

// matchWords lower-cases s, splits it into letters and digits (so
// "sci-fi" is "sci fi" and "Disney+" is "disney") and drops a plural "s".
func matchWords(s string) []string {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, w := range fields {
		out = append(out, singular(w))
	}
	return out
}

// singular drops a plural or third-person ending: "gems" and "gem",
// "rewatches" and "rewatch", "comedies" and "comedy" compare equal.
func singular(w string) string {
	switch {
	case len(w) <= 3 || !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss"):
		return w
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	}
	return w[:len(w)-1]
}

// ExtractStore is what the memory extractor writes messages to and reads
// memories from; *sqlite.DB is one.
type ExtractStore interface {
	AppendMessages(ctx context.Context, s memento.Scope, thread string, msgs []memento.Message, jobsFor func(memento.Message) []memento.JobRequest) (*memento.AppendResult, error)
	Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error)
}

// Rememberer processes one stored message of a user;
// *pipeline.Pipeline is one.
type Rememberer interface {
	Process(ctx context.Context, s memento.Scope, messageID string) (*memento.MemoryRun, error)
}

// MemoryExtractor is Memento's attribute memory as an Extractor: each item
// is a fresh user whose thread holds the item's earlier messages, the
// agent's question and the message, stored and run through the pipeline
// in order. What the item's message added is the clauses of the memories
// its run wrote that were not in the user's values before it.
type MemoryExtractor struct {
	Label    string
	Store    ExtractStore
	Pipeline Rememberer
	// Tenant scopes the evaluation's users; "" is "eval-extract".
	Tenant string
	// Start is the time of the first message; zero is a fixed date.
	Start time.Time
}

// Name implements Extractor.
func (x *MemoryExtractor) Name() string { return x.Label }

// Extract implements Extractor.
func (x *MemoryExtractor) Extract(ctx context.Context, it ExtractItem) ([]Extracted, error) {
	tenant := x.Tenant
	if tenant == "" {
		tenant = "eval-extract"
	}
	s := memento.Scope{Tenant: tenant, User: "u-" + it.ID}
	at := x.Start
	if at.IsZero() {
		at = time.Date(2025, 6, 1, 20, 0, 0, 0, time.UTC)
	}
	var msgs []memento.Message
	for i, b := range it.Before {
		msgs = append(msgs, memento.Message{ID: fmt.Sprintf("%s-b%d", it.ID, i), Role: memento.RoleUser, Text: b})
	}
	if strings.TrimSpace(it.Asked) != "" {
		msgs = append(msgs, memento.Message{ID: it.ID + "-q", Role: memento.RoleAssistant, Text: it.Asked})
	}
	msgs = append(msgs, memento.Message{ID: it.ID + "-m", Role: memento.RoleUser, Text: it.Message})
	for i := range msgs {
		msgs[i].At = at.Add(time.Duration(i) * time.Minute)
	}
	res, err := x.Store.AppendMessages(ctx, s, "t-"+it.ID, msgs, nil)
	if err != nil {
		return nil, fmt.Errorf("store item %s: %w", it.ID, err)
	}
	stored := res.Messages
	for _, m := range stored[:len(stored)-1] {
		if _, err := x.Pipeline.Process(ctx, s, m.ID); err != nil {
			return nil, fmt.Errorf("item %s: earlier message: %w", it.ID, err)
		}
	}
	before, err := x.Store.Memories(ctx, s, memento.MemoryFilter{})
	if err != nil {
		return nil, fmt.Errorf("item %s: %w", it.ID, err)
	}
	known := map[string]bool{}
	for _, m := range before {
		for _, c := range strings.Split(m.Value, ";") {
			known[strings.ToUpper(m.Attribute)+"\x00"+strings.ToLower(strings.TrimSpace(c))] = true
		}
	}
	run, err := x.Pipeline.Process(ctx, s, stored[len(stored)-1].ID)
	if err != nil {
		return nil, fmt.Errorf("item %s: %w", it.ID, err)
	}
	after, err := x.Store.Memories(ctx, s, memento.MemoryFilter{})
	if err != nil {
		return nil, fmt.Errorf("item %s: %w", it.ID, err)
	}
	var out []Extracted
	for _, m := range after {
		if !slices.Contains(run.Memories, m.ID) {
			continue
		}
		for _, c := range strings.Split(m.Value, ";") {
			c = strings.TrimSpace(c)
			if c == "" || known[strings.ToUpper(m.Attribute)+"\x00"+strings.ToLower(c)] {
				continue
			}
			out = append(out, Extracted{Attribute: strings.ToUpper(m.Attribute), Text: c})
		}
	}
	// What the message ended: clauses current before and not after.
	current := map[string]bool{}
	for _, m := range after {
		for _, c := range strings.Split(m.Value, ";") {
			current[strings.ToUpper(m.Attribute)+"\x00"+strings.ToLower(strings.TrimSpace(c))] = true
		}
	}
	for _, m := range before {
		for _, c := range strings.Split(m.Value, ";") {
			c = strings.TrimSpace(c)
			if c != "" && !current[strings.ToUpper(m.Attribute)+"\x00"+strings.ToLower(c)] {
				out = append(out, Extracted{Attribute: strings.ToUpper(m.Attribute), Text: c, Superseded: true})
			}
		}
	}
	return out, nil
}

// KeywordExtractor is the baseline: it files the whole message under
// every attribute whose name or description shares a word with it, and
// reads neither the question before it nor negation. Its words come from
// the schema, not from the labelled messages.
type KeywordExtractor struct {
	keys map[string][]string
	// order keeps the schema's order.
	order []string
}

// keywordNoise are schema words too common to mark an attribute.
var keywordNoise = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "of": true,
	"to": true, "on": true, "in": true, "for": true, "with": true, "such": true, "as": true, "user": true,
	"users": true, "their": true, "they": true, "what": true, "how": true, "when": true, "where": true,
	"who": true, "whom": true, "whether": true, "has": true, "have": true, "not": true, "yet": true, "is": true,
	"are": true, "that": true, "this": true, "its": true, "from": true, "by": true, "at": true, "them": true,
	"title": true, "titles": true, "film": true, "films": true, "tv": true, "series": true, "watch": true,
	"watches": true, "watching": true, "kind": true, "kinds": true, "things": true, "thing": true, "do": true,
	"done": true, "e": true, "g": true, "about": true, "other": true, "one": true, "again": true, "best": true}

// NewKeywordExtractor builds the baseline from a schema.
func NewKeywordExtractor(schema []memento.AttributeSpec) *KeywordExtractor {
	k := &KeywordExtractor{keys: map[string][]string{}}
	for _, a := range schema {
		name := strings.ToUpper(a.Name)
		seen := map[string]bool{}
		for _, w := range matchWords(strings.ReplaceAll(a.Name, "_", " ") + " " + a.Description) {
			if len(w) < 3 || keywordNoise[w] || seen[w] {
				continue
			}
			seen[w] = true
			k.keys[name] = append(k.keys[name], w)
		}
		k.order = append(k.order, name)
	}
	return k
}

// Name implements Extractor.
func (k *KeywordExtractor) Name() string { return "keyword baseline" }

// Extract implements Extractor.
func (k *KeywordExtractor) Extract(_ context.Context, it ExtractItem) ([]Extracted, error) {
	have := map[string]bool{}
	for _, w := range matchWords(it.Message) {
		have[w] = true
	}
	var out []Extracted
	for _, a := range k.order {
		for _, w := range k.keys[a] {
			if have[w] {
				out = append(out, Extracted{Attribute: a, Text: it.Message})
				break
			}
		}
	}
	return out, nil
}
