package offline

// Negation scope: a constraint word is negated when a negator precedes it
// in the same clause, within a few words and without a contrast word in
// between ("I don't like horror, what about thrillers" negates horror only),
// or when the clause goes on to deny it ("horror is not for me").

// negators turn what follows them down.
var negators = set(
	"no", "not", "non", "never", "nor", "neither", "without", "except", "excluding", "minus",
	"don't", "dont", "doesn't", "doesnt", "didn't", "didnt", "won't", "wont", "wouldn't",
	"isn't", "aren't", "wasn't", "weren't", "can't", "cant", "cannot", "couldn't", "shouldn't",
	"hate", "hates", "hated", "dislike", "dislikes", "disliked", "avoid", "avoiding", "skip",
	"less", "fewer", "too", "nothing", "none", "tired", "sick", "against", "ain't", "nope",
	"besides", "exclude", "detest", "loathe", "despise", "enough",
)

// negationBreakers end a negation's reach when scanning back from a word.
var negationBreakers = set(
	"but", "though", "although", "however", "whereas", "yet", "what", "how", "prefer",
	"maybe", "perhaps", "instead", "so", "then", "actually", "rather", "now", "except",
)

// postNegations deny what precedes them in the same clause.
var postNegations = [][]string{
	{"isn't"}, {"aren't"}, {"is", "not"}, {"are", "not"}, {"not", "for", "me"},
	{"no", "thanks"}, {"no", "thank"}, {"sucks"}, {"suck"}, {"bores"}, {"bore", "me"},
	{"is", "boring"}, {"are", "boring"}, {"scare", "me"}, {"scares", "me"}, {"is", "too"},
	{"are", "too"}, {"please", "no"},
}

// negatedAt reports whether the phrase toks[i:i+n] is negated.
func negatedAt(toks []token, i, n int) bool {
	// "a bit scary", "a little creepy": a complaint, not a wish.
	if moodAdjectives[toks[i].w] && (matchSeq(toks, i-2, "a bit") || matchSeq(toks, i-2, "a little") || matchSeq(toks, i-1, "bit")) {
		return true
	}
	// Look back up to six words in the clause.
	for j, steps := i-1, 0; j >= 0 && steps < 6; j, steps = j-1, steps+1 {
		if toks[j+1].brk != 0 {
			break
		}
		w := toks[j].w
		switch {
		case w == "but" && j > 0 && (toks[j-1].w == "anything" || toks[j-1].w == "everything" || toks[j-1].w == "all"):
			return true
		case w == "than" && j > 0 && (toks[j-1].w == "other" || toks[j-1].w == "rather"):
			return true
		case w == "of" && j > 0 && toks[j-1].w == "instead":
			return true
		case w == "instead" && j+1 < len(toks) && toks[j+1].w == "of":
			return true
		case w == "rather" && j+1 < len(toks) && toks[j+1].w == "than":
			return true
		case w == "except" || negators[w]:
			if isPositiveNegation(toks, j) {
				continue
			}
			return true
		case negationBreakers[w]:
			return false
		}
	}
	// Look ahead up to four words in the clause.
	for j := i + n; j < len(toks) && j < i+n+4; j++ {
		if toks[j].brk != 0 {
			break
		}
		for _, p := range postNegations {
			if matchAt(toks, j, p) {
				return true
			}
		}
	}
	return false
}

// isPositiveNegation reports negators that do not negate here: "tired" and
// "sick" only count in "tired of" and "sick of". ("not only comedies" stays
// negated on purpose: it widens rather than names a constraint, and a rule
// that ignores it never sets a wrong one.)
func isPositiveNegation(toks []token, j int) bool {
	switch toks[j].w {
	case "tired", "sick":
		return j+1 >= len(toks) || toks[j+1].w != "of"
	}
	return false
}

// moodAdjectives are genre words that describe a title's effect, which "a
// bit" turns into a complaint.
var moodAdjectives = set("scary", "creepy", "spooky", "frightening", "terrifying", "dramatic", "romantic", "violent")

// softNegation reports a negated phrase that still does not turn its genre
// down: "not only comedies" widens the search, and a double negation ("I
// don't dislike horror", "I wouldn't mind horror") is a mild yes. Such a
// genre leaves the genres in force but never becomes an excluded genre.
func softNegation(toks []token, i int) bool {
	negs := 0
	for j, steps := i-1, 0; j >= 0 && steps < 6; j, steps = j-1, steps+1 {
		if toks[j+1].brk != 0 {
			break
		}
		w := toks[j].w
		if (w == "only" || w == "just" || w == "solely" || w == "exclusively") && j > 0 && toks[j-1].w == "not" {
			return true
		}
		if w == "mind" || w == "against" {
			negs++
		} else if negators[w] && !isPositiveNegation(toks, j) {
			negs++
		}
	}
	return negs >= 2
}
