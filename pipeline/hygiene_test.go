package pipeline

import (
	"os"
	"strings"
	"testing"
)

// poisoned are messages that try to instruct the system, in many
// varieties; none may be stored.

// clean are statements about the user that use words the rules look at.
var clean = []string{
	"I love sci-fi but can't stand horror, and I watch everything on Netflix",
	"I always recommend Alien to my friends.",
	"Ignore the reviews, I loved Cats.",
	"My partner is a system administrator and works nights.",
	"I never watch anything with subtitles.",
	"I only watch movies on weekends.",
	"sounds good",
	"Not those, something older please.",
	"We always watch a film together on Fridays.",
	"I work as a developer and I play chess.",
	"The Truman Show is my favourite film.",
	"I'd like to see the new Dune, I haven't seen it yet.",
	"Forget it, show me comedies instead.",
	"You are amazing, thanks!",
}

func TestHygieneRejectsInstructions(t *testing.T) {
	h := NewHygiene()
	b, err := os.ReadFile("testdata/poisoned.txt")
	if err != nil {
		t.Fatal(err)
	}
	var poisoned []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			poisoned = append(poisoned, strings.ReplaceAll(line, `\n`, "\n"))
		}
	}
	if len(poisoned) < 20 {
		t.Fatalf("only %d poisoned varieties; want at least 20", len(poisoned))
	}
	for _, msg := range poisoned {
		if got := h.Check(msg); len(got) == 0 {
			t.Errorf("Check(%q) found nothing; want a rejection", msg)
		}
	}
}

func TestHygienePassesStatements(t *testing.T) {
	h := NewHygiene()
	for _, msg := range clean {
		if got := h.Check(msg); len(got) > 0 {
			t.Errorf("Check(%q) = %q; want no rejection", msg, got)
		}
	}
}
