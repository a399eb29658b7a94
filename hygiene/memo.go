package hygiene

import (
	"slices"

	"github.com/memento-ai/memento/internal/memo"
)

// The verdicts of recent texts.
//
// A message is checked on every path into memory: the attribute pipeline,
// the preference learner and the reader of the actions it reports each
// check it, and each checks it with the user's previous message, which
// was itself checked as a message a moment before. Normalising a text and
// running the rules over it cost about 0.1 ms, a tenth of the background
// work of a message, so the gate keeps the reasons of the texts it
// checked last. A verdict depends on the text alone (the rules never
// change), so a kept one is the verdict.

// The same holds for Stored's verdicts, kept apart (Gate.stored): a
// turn's context renders the user's memories, messages and summaries,
// most of them the last turn's too, and each must pass Stored; in `memento
// torture load` that check was 4% of the server's processor time.

// memoTexts bounds the texts of one generation of the memo; memoLongest
// is the longest text kept (longer texts are rare and would hold memory).
const (
	memoTexts   = 4096
	memoLongest = 4096
)

// verdicts holds the reasons of recent texts in two generations of
// memoTexts (internal/memo), so a text checked again while it is among the
// last memoTexts to 2×memoTexts texts is not checked again; texts longer
// than memoLongest are not kept.
type verdicts struct {
	m memo.Memo[[]string]
}

// newVerdicts returns an empty memo of verdicts.
func newVerdicts() *verdicts { return &verdicts{m: memo.Memo[[]string]{Keys: memoTexts}} }

// get returns the kept reasons of text.
func (v *verdicts) get(text string) ([]string, bool) { return v.m.Get(text) }

// put keeps the reasons of text.
func (v *verdicts) put(text string, reasons []string) {
	if len(text) <= memoLongest {
		v.m.Put(text, slices.Clip(reasons))
	}
}

// checkDefault returns the reasons of the default rules for text, kept or
// found; the slice is the caller's own.
func (g *Gate) checkDefault(text string) []string {
	if g.memo == nil {
		return g.check(Normalise(text), g.rules, nil, false)
	}
	if r, ok := g.memo.get(text); ok {
		return slices.Clone(r)
	}
	r := g.check(Normalise(text), g.rules, nil, false)
	g.memo.put(text, slices.Clone(r))
	return r
}
