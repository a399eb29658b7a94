package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memento-ai/memento/agent"
)

// These tests script one conversation per kind of follow-up through
// `memento replay` on the embedded catalog and the offline model, as a
// user would type it, and check the answers: the active context, the
// titles, the notes and the reply.

// replayLines replays lines (user, thread, text) in a fresh store and
// returns the answers.
func replayLines(t *testing.T, lines ...[3]string) []agent.Response {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		line, _ := json.Marshal(map[string]string{"user": l[0], "thread": l[1], "text": l[2]})
		b.Write(line)
		b.WriteByte('\n')
	}
	script := writeFile(t, "script.jsonl", b.String())
	out, err := run(t, "", "replay", script, "--json", "--db", filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	var answers []agent.Response
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r agent.Response
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decode answer: %v\n%s", err, out)
		}
		answers = append(answers, r)
	}
	if len(answers) != len(lines) {
		t.Fatalf("%d answers for %d lines:\n%s", len(answers), len(lines), out)
	}
	return answers
}

func titleIDs(r agent.Response) []string {
	out := make([]string, len(r.Titles))
	for i, t := range r.Titles {
		out[i] = t.ID
	}
	return out
}

func hasNote(r agent.Response, words ...string) bool {
	return slices.ContainsFunc(r.Notes, func(n string) bool {
		n = strings.ToLower(n)
		for _, w := range words {
			if !strings.Contains(n, strings.ToLower(w)) {
				return false
			}
		}
		return true
	})
}

func hasGenre(ti agent.TitleResult, g string) bool {
	return slices.ContainsFunc(ti.Genres, func(x string) bool { return strings.EqualFold(x, g) })
}

func TestReplayFollowUpByPosition(t *testing.T) {
	t.Parallel()
	a := replayLines(t,
		[3]string{"u", "t", "Recommend 5 crime movies"},
		[3]string{"u", "t", "the second one sounds good, more like that"},
		[3]string{"u", "t", "tell me more about the first one"},
		[3]string{"u", "t", "not the second one"},
	)
	if len(a[0].Titles) != 5 {
		t.Fatalf("turn 1 shows %d titles, want 5: %v", len(a[0].Titles), a[0].Notes)
	}
	second := a[0].Titles[1]
	// "More like that" keeps the count and anchors on the second title.
	if a[1].ActiveContext.Count != 5 || len(a[1].Titles) != 5 {
		t.Errorf("more like that: count %d, %d titles, want 5", a[1].ActiveContext.Count, len(a[1].Titles))
	}
	if !slices.Equal(a[1].ActiveContext.Like, []string{second.ID}) {
		t.Errorf("more like that: like = %v, want [%s]", a[1].ActiveContext.Like, second.ID)
	}
	if slices.Contains(titleIDs(a[1]), second.ID) {
		t.Errorf("more like %s shows it again", second.Title)
	}
	likeWhy := 0
	for _, ti := range a[1].Titles {
		if slices.ContainsFunc(ti.Why, func(w string) bool { return strings.HasPrefix(w, "like "+second.Title) }) {
			likeWhy++
		}
	}
	if likeWhy == 0 {
		t.Errorf("no title of 'more like %s' says it is like it: %+v", second.Title, a[1].Titles)
	}
	if len(a[1].Titles) < 2 {
		t.Fatalf("more like that shows %v", titleIDs(a[1]))
	}
	// "Tell me more about the first one": that title, from the catalog,
	// and no search.
	first := a[1].Titles[0]
	if a[2].Searched || len(a[2].Titles) != 1 || a[2].Titles[0].ID != first.ID {
		t.Errorf("tell me more: searched=%v titles=%v, want only %s", a[2].Searched, titleIDs(a[2]), first.ID)
	}
	if !strings.Contains(a[2].Reply, first.Title) {
		t.Errorf("tell me more about %s: reply %q does not name it", first.Title, a[2].Reply)
	}
	// "Not the second one" turns down exactly that title of the last
	// answer that showed titles.
	rejected := a[1].Titles[1].ID
	if !slices.Contains(a[3].ActiveContext.ExcludedTitleIDs, rejected) {
		t.Errorf("not the second one: exclusions %v lack %s", a[3].ActiveContext.ExcludedTitleIDs, rejected)
	}
	if slices.Contains(titleIDs(a[3]), rejected) || len(a[3].Titles) == 0 {
		t.Errorf("not the second one: shows %v", titleIDs(a[3]))
	}
}

func TestReplayFollowUpLikeATitle(t *testing.T) {
	t.Parallel()
	a := replayLines(t,
		[3]string{"u", "t", "something like Inception"},
		[3]string{"u", "t2", "like The Matrix but funnier"},
	)
	if len(a[0].ActiveContext.Like) != 1 || len(a[0].Titles) == 0 {
		t.Fatalf("something like Inception: like %v, titles %v, notes %v", a[0].ActiveContext.Like, titleIDs(a[0]), a[0].Notes)
	}
	for _, ti := range a[0].Titles {
		if ti.Title == "Inception" {
			t.Errorf("something like Inception shows Inception")
		}
	}
	if len(a[1].ActiveContext.Like) != 1 || !slices.Contains(a[1].ActiveContext.Genres, "Comedy") {
		t.Errorf("like The Matrix but funnier: context %+v", a[1].ActiveContext)
	}
	for _, ti := range a[1].Titles {
		if !hasGenre(ti, "Comedy") {
			t.Errorf("like The Matrix but funnier shows %s %v, not a comedy", ti.Title, ti.Genres)
		}
	}
}

func TestReplayFollowUpSeenByName(t *testing.T) {
	t.Parallel()
	a := replayLines(t,
		[3]string{"u", "t", "crime movies with Al Pacino"},
		[3]string{"u", "t", "I've already seen Heat"},
		[3]string{"u", "t2", "Recommend 10 crime movies with Al Pacino"},
		[3]string{"u", "t3", "crime thrillers from the 90s"},
	)
	heat := ""
	for _, r := range a[:2] {
		for _, id := range r.ActiveContext.ExcludedTitleIDs {
			if strings.Contains(id, "Heat_(1995") {
				heat = id
			}
		}
	}
	if heat == "" {
		t.Fatalf("I've already seen Heat: exclusions %v lack Heat (1995)", a[1].ActiveContext.ExcludedTitleIDs)
	}
	if len(a[1].ActiveContext.ExcludedTitleIDs) != 1 {
		t.Errorf("seen Heat excludes %v, want Heat alone", a[1].ActiveContext.ExcludedTitleIDs)
	}
	if len(a[1].ActiveContext.People) == 0 {
		t.Errorf("seen Heat dropped the constraints: %+v", a[1].ActiveContext)
	}
	// Later threads never show it again.
	for i, r := range a[1:] {
		if slices.Contains(titleIDs(r), heat) {
			t.Errorf("turn %d shows Heat again: %v", i+2, titleIDs(r))
		}
	}
	if len(a[2].Titles) == 0 {
		t.Errorf("a new thread with Al Pacino shows nothing: %v", a[2].Notes)
	}
}

func TestReplayFollowUpTopicChange(t *testing.T) {
	t.Parallel()
	a := replayLines(t,
		[3]string{"u", "t", "comedies with Tom Hanks"},
		[3]string{"u", "t", "actually I'm in the mood for a scary movie from the 80s"},
		[3]string{"u", "t", "start over"},
	)
	ac := a[1].ActiveContext
	if len(ac.People) != 0 || !slices.Contains(ac.Genres, "Horror") || ac.MinYear == nil || *ac.MinYear != 1980 || ac.MaxYear == nil || *ac.MaxYear != 1989 {
		t.Errorf("topic change: context %+v", ac)
	}
	if len(a[1].Titles) == 0 {
		t.Errorf("topic change found nothing: %v", a[1].Notes)
	}
	if !hasNote(a[1], "Tom Hanks") {
		t.Errorf("topic change notes %v do not say the actor was dropped", a[1].Notes)
	}
	if a[2].ActiveContext.HasConstraints() {
		t.Errorf("start over keeps %+v", a[2].ActiveContext)
	}
}

func TestReplayFollowUpCounts(t *testing.T) {
	t.Parallel()
	a := replayLines(t,
		[3]string{"u", "t", "some westerns"},
		[3]string{"u", "t", "ten please"},
		[3]string{"u", "t2", "a dozen comedies"},
		[3]string{"u", "t3", "just one thriller"},
		[3]string{"u", "t4", "recommend 50 movies"},
	)
	for i, want := range map[int]int{1: 10, 2: 12, 3: 1, 4: 20} {
		if got := a[i].ActiveContext.Count; got != want || len(a[i].Titles) != want {
			t.Errorf("turn %d: count %d with %d titles, want %d", i+1, got, len(a[i].Titles), want)
		}
	}
	if !slices.Contains(a[1].ActiveContext.Genres, "Western") {
		t.Errorf("ten please lost the genre: %+v", a[1].ActiveContext)
	}
	if !hasNote(a[4], "50", "20") {
		t.Errorf("a count over the cap has no note: %v", a[4].Notes)
	}
}

func TestReplayFollowUpTyposAndSoftWishes(t *testing.T) {
	t.Parallel()
	a := replayLines(t,
		[3]string{"u", "t", "horor movies"},
		[3]string{"u", "t2", "a comdy, not too long, on Netflix"},
	)
	if !slices.Contains(a[0].ActiveContext.Genres, "Horror") || len(a[0].ActiveContext.Corrections) == 0 {
		t.Errorf("horor: context %+v", a[0].ActiveContext)
	}
	if !slices.Contains(a[1].ActiveContext.Genres, "Comedy") {
		t.Errorf("comdy: context %+v", a[1].ActiveContext)
	}
	kinds := map[string]bool{}
	for _, sc := range a[1].ActiveContext.Soft {
		kinds[sc.Kind] = true
	}
	if !kinds["runtime"] || !kinds["platform"] {
		t.Errorf("soft wishes = %+v, want runtime and platform", a[1].ActiveContext.Soft)
	}
	if !hasNote(a[1], "Netflix") || !hasNote(a[1], "not too long") {
		t.Errorf("notes %v do not say which wishes could not be applied", a[1].Notes)
	}
}

// TestReplayMemoryShapesRecommendations is the user: what they
// said in one thread shapes the next one's recommendations, and the reply
// says so; a user the agent knows nothing of hears nothing about memory.
func TestReplayMemoryShapesRecommendations(t *testing.T) {
	t.Parallel()
	a := replayLines(t,
		[3]string{"ann", "t1", "I can't stand slasher films, I love heist movies"},
		[3]string{"ann", "t2", "Recommend 10 movies"},
		[3]string{"bob", "t1", "Recommend 10 movies"},
		[3]string{"cat", "t1", "I hate musicals"},
		[3]string{"cat", "t2", "recommend some musicals"},
	)
	heists := 0
	for _, ti := range a[1].Titles {
		if hasGenre(ti, "Horror") || hasGenre(ti, "Slasher") {
			t.Errorf("a user who can't stand slashers gets %s %v", ti.Title, ti.Genres)
		}
		if hasGenre(ti, "Crime") || strings.Contains(strings.ToLower(ti.Overview), "heist") {
			heists++
		}
	}
	if len(a[1].Titles) != 10 || heists < 3 {
		t.Errorf("ann gets %d titles, %d heist or crime, want 10 with at least 3: %+v", len(a[1].Titles), heists, a[1].Titles)
	}
	for _, r := range a[2:3] {
		low := strings.ToLower(r.Reply)
		for _, w := range []string{"remember", "told me", "kept in mind", "you like", "you dislike"} {
			if strings.Contains(low, w) {
				t.Errorf("reply to a user without memory mentions memory (%q): %q", w, r.Reply)
			}
		}
		for _, ti := range r.Titles {
			for _, why := range ti.Why {
				if strings.HasPrefix(why, "you ") {
					t.Errorf("a user without memory gets the reason %q on %s", why, ti.Title)
				}
			}
		}
	}
	if len(a[4].Titles) == 0 {
		t.Fatalf("musicals for a user who hates them: none shown: %v", a[4].Notes)
	}
	for _, ti := range a[4].Titles {
		if !hasGenre(ti, "Musical") {
			t.Errorf("recommend some musicals shows %s %v", ti.Title, ti.Genres)
		}
	}
	if low := strings.ToLower(a[4].Reply); !strings.Contains(low, "told me you hate musicals") {
		t.Errorf("reply to a request against a remembered dislike does not say so: %q", a[4].Reply)
	}
}

// TestReplayLongThreadStaysBounded checks that a thread of 50 turns has a
// short latest summary and that the answer does not grow with the thread.
func TestReplayLongThreadStaysBounded(t *testing.T) {
	t.Parallel()
	msgs := []string{"comedies from the 90s", "not those", "make it older", "movie only", "I love heist films",
		"something with Tom Hanks", "different ones please", "newer", "westerns", "I can't stand gore"}
	var lines [][3]string
	for i := range 50 {
		lines = append(lines, [3]string{"u", "t", msgs[i%len(msgs)]})
	}
	a := replayLines(t, lines...)
	words := len(strings.Fields(a[49].Memory.Summary))
	if words == 0 || words >= 150 {
		t.Errorf("summary after 49 turns has %d words, want 1-149: %q", words, a[49].Memory.Summary)
	}
	size := func(r agent.Response) int {
		r.Titles, r.ActiveContext.ExcludedTitleIDs = nil, nil // these are bounded by the count and grow by design
		b, _ := json.Marshal(r)
		return len(b)
	}
	if s10, s49 := size(a[10]), size(a[49]); s49 > 2*s10+2000 {
		t.Errorf("the answer grows with the thread: %d bytes at turn 11, %d at turn 50", s10, s49)
	}
}
