package eval

import (
	"strings"

	"github.com/memento-ai/memento/fulltext"
)

// answerTokens normalises an answer the way the LoCoMo paper's evaluation
// does before counting tokens: commas and ASCII punctuation removed, lower
// case, the words "a", "an", "the" and "and" dropped, split at white space,
// and each token Porter-stemmed.
func answerTokens(s string) []string {
	s = strings.ToLower(strings.ReplaceAll(s, ",", ""))
	s = strings.Map(func(r rune) rune {
		if r < 128 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) {
			return -1
		}
		return r
	}, s)
	var out []string
	for _, w := range strings.Fields(s) {
		switch w {
		case "a", "an", "the", "and":
			continue
		}
		out = append(out, fulltext.Stem(w))
	}
	return out
}

// TokenF1 is the harmonic mean of token precision and recall between a
// predicted and a gold answer, after answerTokens; 0 when they share no
// token.
func TokenF1(pred, gold string) float64 {
	p, g := answerTokens(pred), answerTokens(gold)
	counts := map[string]int{}
	for _, t := range g {
		counts[t]++
	}
	same := 0
	for _, t := range p {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	precision := float64(same) / float64(len(p))
	recall := float64(same) / float64(len(g))
	return 2 * precision * recall / (precision + recall)
}

// LoCoMoF1 scores an answer to a LoCoMo question as the paper does: for
// multi-hop questions (category 1) the gold answer is a comma-separated
// list, and each gold part takes the best F1 of any comma-separated part
// of the prediction, averaged over the gold parts; for open-domain
// questions (category 3) only the gold answer's first ';'-separated
// alternative counts; otherwise it is TokenF1.
func LoCoMoF1(pred, gold string, category int) float64 {
	switch category {
	case 1:
		golds := strings.Split(gold, ",")
		preds := strings.Split(pred, ",")
		sum := 0.0
		for _, g := range golds {
			best := 0.0
			for _, p := range preds {
				best = max(best, TokenF1(strings.TrimSpace(p), strings.TrimSpace(g)))
			}
			sum += best
		}
		return sum / float64(len(golds))
	case 3:
		gold, _, _ = strings.Cut(gold, ";")
		return TokenF1(pred, strings.TrimSpace(gold))
	}
	return TokenF1(pred, gold)
}
