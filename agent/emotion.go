package agent

import (
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// FrustrationConfidence is the confidence from which a negative emotion
// (anger, disgust, sadness) on a repeated rejection counts as frustration.
const FrustrationConfidence = 0.4

// frustrated reports a turn in which the user turns the titles down again
// (the context already held exclusions from an earlier rejection) and
// says so with a negative emotion: the reply then owns the misses and
// offers to widen the search instead of only trying once more.
func frustrated(u *memento.Understanding, before memento.ActiveContext, e *memento.Emotion) bool {
	if !u.Reject && len(u.RejectTitles) == 0 {
		return false
	}
	return len(before.ExcludedTitleIDs) > 0 && e.Negative(FrustrationConfidence)
}

// widen lists, in words, the constraints of ac the search could drop to
// find more, most restrictive first: people, years, genres, the type, the
// topic and the soft wishes.
func widen(ac memento.ActiveContext) []string {
	var out []string
	if len(ac.People) > 0 {
		out = append(out, strings.Join(ac.People, " and "))
	}
	switch {
	case ac.MinYear != nil && ac.MaxYear != nil:
		out = append(out, fmt.Sprintf("the years %d to %d", *ac.MinYear, *ac.MaxYear))
	case ac.MinYear != nil:
		out = append(out, fmt.Sprintf("the limit of %d onward", *ac.MinYear))
	case ac.MaxYear != nil:
		out = append(out, fmt.Sprintf("the limit of %d and earlier", *ac.MaxYear))
	}
	if len(ac.Genres) > 0 {
		g := strings.ToLower(strings.Join(ac.Genres, " or "))
		if len(ac.Genres) == 1 {
			out = append(out, "the "+g+" genre")
		} else {
			out = append(out, "the genres "+g)
		}
	}
	switch ac.TitleType {
	case memento.TypeMovie:
		out = append(out, "movies only")
	case memento.TypeTVSeries:
		out = append(out, "series only")
	}
	if ac.FreeText != "" {
		out = append(out, fmt.Sprintf("the topic %q", ac.FreeText))
	}
	for _, s := range ac.Soft {
		out = append(out, fmt.Sprintf("%q", s.Said))
	}
	if len(out) > 4 {
		out = out[:4]
	}
	return out
}
