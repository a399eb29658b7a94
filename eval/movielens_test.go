package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScore(t *testing.T) {
	rel := map[string]bool{"a": true, "b": true}
	tests := []struct {
		list      []string
		hit, ndcg float64
	}{
		{[]string{"a", "b", "c"}, 1, 1},
		{[]string{"c", "a"}, 1, (1 / math.Log2(3)) / (1 + 1/math.Log2(3))},
		{[]string{"c", "d"}, 0, 0},
	}
	for _, tt := range tests {
		h, d := score(tt.list, rel, 3)
		if h != tt.hit || math.Abs(d-tt.ndcg) > 1e-12 {
			t.Errorf("score(%v) = %v, %v; want %v, %v", tt.list, h, d, tt.hit, tt.ndcg)
		}
	}
}

// TestMovieLensLearnsFromTheCrowd builds a data set where users who like
// film 1 go on to like film 2, while film 3 is the most rated: the profile
// ranking finds film 2 for every user, popularity does not.
func TestMovieLensLearnsFromTheCrowd(t *testing.T) {
	dir := t.TempDir()
	var movies, ratings strings.Builder
	movies.WriteString("movieId,title,genres\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&movies, "%d,Film %d (%d),Drama\n", i, i, 1990+i)
	}
	ratings.WriteString("userId,movieId,rating,timestamp\n")
	ts := 1000
	row := func(u, m int, r float64) {
		ts++
		fmt.Fprintf(&ratings, "%d,%d,%.1f,%d\n", u, m, r, ts)
	}
	for u := 1; u <= 10; u++ {
		if u > 5 {
			// The crowd liked film 1 and then film 2, in training.
			row(u, 1, 5)
			row(u, 2, 5)
			for k := range 8 {
				row(u, 4+(u+k)%16, 3)
			}
			continue
		}
		// Training (80%): fillers, film 3, film 1; held out: a film
		// disliked and film 2, liked.
		for k := range 6 {
			row(u, 4+(u+k)%16, 3)
		}
		row(u, 3, 3)
		row(u, 1, 5)
		row(u, 19, 2)
		row(u, 2, 5)
	}
	// Extra users who make film 3 the most rated.
	for u := 11; u <= 20; u++ {
		row(u, 3, 3)
		row(u, 4, 3)
		row(u, 5, 3)
		row(u, 6, 3)
		row(u, 7, 3)
	}
	os.WriteFile(filepath.Join(dir, "movies.csv"), []byte(movies.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "ratings.csv"), []byte(ratings.String()), 0o644)
	res, err := MovieLens(context.Background(), MovieLensOptions{Dir: dir, FromUser: 1, ToUser: 5, K: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Users != 5 || res.Hit != 1 || res.NDCG != 1 {
		t.Errorf("profile ranking: %+v, want every user's held-out film first", res)
	}
	if pop := res.Baselines["popularity"]; pop.Hit != 0 {
		t.Errorf("popularity baseline: %+v, want no hits", pop)
	}
	if _, err := MovieLens(context.Background(), MovieLensOptions{Dir: dir, FromUser: 5, ToUser: 1}); err == nil {
		t.Error("a backwards range was accepted")
	}
	if _, err := MovieLens(context.Background(), MovieLensOptions{Dir: t.TempDir(), FromUser: 1, ToUser: 2}); err == nil {
		t.Error("a directory without data was accepted")
	}
}
