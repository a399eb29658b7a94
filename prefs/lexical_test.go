package prefs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/memento-ai/memento/fulltext"
)

func TestConceptWordsMatchTitles(t *testing.T) {
	tests := []struct {
		concept, text string
		want          bool
	}{
		{"heist films", "A crew of thieves plans one last heist.", true},
		{"heists", "A crew of thieves plans one last heist.", true},
		{"lord of the rings", "The Lord of the Rings: The Two Towers", true},
		{"tom hanks movies", "Starring Tom Hanks as a lawyer.", true},
		{"tom hanks", "Tom meets Hanks.", false}, // "meets" sits between them
		{"Amélie", "Amelie (2001) follows a shy waitress.", true},
		{"time travel", "He travels back in time.", false}, // out of order
		{"good movies", "A good movie.", false},            // only noise words: nothing to match
	}
	for _, tt := range tests {
		got := containsRun(words(tt.text), conceptWords(tt.concept))
		if got != tt.want {
			t.Errorf("concept %q in %q = %v, want %v (concept %q, text %q)", tt.concept, tt.text, got, tt.want,
				conceptWords(tt.concept), words(tt.text))
		}
	}
}

// TestWordsAreFulltextTerms checks that the lexical match spells words as
// the catalog and recall do: fulltext's topic terms.
func TestWordsAreFulltextTerms(t *testing.T) {
	text := "Witches, heroes and the 1990s' heists, in Málaga"
	if got, want := words(text), fulltext.TopicTerms(text); !slices.Equal(got, want) {
		t.Errorf("words(%q) = %q, want fulltext.TopicTerms %q", text, got, want)
	}
}

// TestMatchesKeepsRuns checks the index's memo of runs of several words:
// every run, single words, pairs found in titles, pairs in the wrong order
// and words that never meet, matches the titles whose text holds it by
// reading each text, computed at once and again from the memo, from eight
// goroutines at once.
func TestMatchesKeepsRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	titles := randomTitles(r, "t", 400)
	x := buildTermIndex(titles)
	var runs [][]string
	for _, c := range randomConcepts(r, 120, titles) {
		if w := conceptWords(c.Concept); len(w) > 0 {
			back := slices.Clone(w)
			slices.Reverse(back)
			runs = append(runs, w, back)
		}
	}
	runs = append(runs, []string{"heist", "dragon", "wizard"}, []string{"nosuchword", "heist"})
	texts := make([][]string, len(titles))
	for i, tt := range titles {
		texts[i] = words(TitleText(tt))
	}
	want := make([][]int32, len(runs))
	several := 0
	for k, run := range runs {
		for i := range titles {
			if containsRun(texts[i], run) {
				want[k] = append(want[k], int32(i))
			}
		}
		if len(run) > 1 && len(want[k]) > 0 {
			several++
		}
	}
	if several < 10 {
		t.Fatalf("only %d runs of several words match a title: the test checks little", several)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for pass := range 2 {
				for k := range runs {
					k := (k + g*17) % len(runs)
					if got := x.matches(runs[k], titles); !slices.Equal(got, want[k]) {
						t.Errorf("goroutine %d pass %d: %q matches %v, want %v", g, pass, runs[k], got, want[k])
					}
				}
			}
		})
	}
	wg.Wait()
	if x.runs.Len() == 0 {
		t.Error("no run kept")
	}
}

// TestRunMemoBounds checks that the word index's memo of runs forgets the older of its
// two generations, by count of runs and by titles held.
func TestRunMemoBounds(t *testing.T) {
	m := &buildTermIndex(nil).runs
	m.Put("first", []int32{1})
	for i := range runMemoRuns {
		m.Put(fmt.Sprint("run ", i), []int32{int32(i)})
	}
	if got, ok := m.Get("first"); !ok || !slices.Equal(got, []int32{1}) {
		t.Errorf("a run of the older generation: %v %v, want kept", got, ok)
	}
	for i := range runMemoRuns {
		m.Put(fmt.Sprint("later ", i), nil)
	}
	if _, ok := m.Get("first"); ok {
		t.Errorf("a run two generations old is still kept")
	}
	big := make([]int32, runMemoTitles/2+1)
	n := &buildTermIndex(nil).runs
	n.Put("a b", big)
	n.Put("c d", big)
	n.Put("e f", big)
	if _, ok := n.Get("a b"); ok {
		t.Errorf("the memo holds %d title positions", 3*len(big))
	}
	if _, ok := n.Get("c d"); !ok {
		t.Errorf("the previous generation is lost")
	}
}

// TestHitTable checks the table of the preferences each title matches
// against one built title by title.
func TestHitTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 50, 1000} {
		matched := make([][]int32, r.IntN(30))
		byTitle := map[int32][]int32{}
		for p := range matched {
			for pos := range n {
				if r.IntN(7) == 0 {
					matched[p] = append(matched[p], int32(pos))
					byTitle[int32(pos)] = append(byTitle[int32(pos)], int32(p))
				}
			}
		}
		start, hits := hitTable(n, matched)
		if len(start) != n+1 {
			t.Fatalf("n %d: %d starts", n, len(start))
		}
		u := &taste{hitStart: start, hits: hits}
		for pos := range n {
			if got := u.hitsAt(int32(pos)); !slices.Equal(got, byTitle[int32(pos)]) && len(got)+len(byTitle[int32(pos)]) > 0 {
				t.Errorf("n %d title %d: %v, want %v", n, pos, got, byTitle[int32(pos)])
			}
		}
		if got := u.hitsAt(int32(n)); len(got) != 0 {
			t.Errorf("n %d: past the end %v", n, got)
		}
	}
}
