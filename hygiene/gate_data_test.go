package hygiene_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// poison is one labelled variety of the poisoning set.
type poison struct {
	Kind string `json:"kind"`
	// Text is the poisoned text; split cases have Messages instead, the
	// user's messages in order, each clean alone.
	Text     string   `json:"text"`
	Messages []string `json:"messages"`
}

// texts returns the user's messages of the case in order.
func (p poison) texts() []string {
	if len(p.Messages) > 0 {
		return p.Messages
	}
	return []string{p.Text}
}

func (p poison) String() string { return p.Kind + " " + strings.Join(p.texts(), " / ") }

// benign is a look-alike that must still be remembered: Expect says as
// what the offline model keeps it ("memory", "preference" or "either").
type benign struct {
	Text   string `json:"text"`
	Expect string `json:"expect"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// kinds are the kinds of poison the set must cover.
var kinds = []string{"direct", "paraphrased", "multilingual", "obfuscated", "split", "assistant", "import"}

func TestPoisonSetIsLabelled(t *testing.T) {
	set := readJSONL[poison](t, "testdata/poison.jsonl")
	if len(set) < 100 {
		t.Errorf("%d poisons; want at least 100", len(set))
	}
	byKind := map[string]int{}
	seen := map[string]bool{}
	for _, p := range set {
		byKind[p.Kind]++
		if seen[p.String()] {
			t.Errorf("%s is listed twice", p)
		}
		seen[p.String()] = true
		if (p.Kind == "split") != (len(p.Messages) > 1) {
			t.Errorf("%s: split cases, and only they, list two or more messages", p)
		}
	}
	for _, k := range kinds {
		if byKind[k] == 0 {
			t.Errorf("no poison of kind %q", k)
		}
	}
	if len(byKind) != len(kinds) {
		t.Errorf("kinds %v; want only %v", byKind, kinds)
	}
	if b := readJSONL[benign](t, "testdata/benign.jsonl"); len(b) < 40 {
		t.Errorf("%d benign look-alikes; want at least 40", len(b))
	}
}

// TestGateRefusesEveryPoison checks the gate alone: each poison is
// refused as the path that sees it would check it (split cases only
// joined, their parts passing alone; assistant turns by role).
func TestGateRefusesEveryPoison(t *testing.T) {
	for _, p := range readJSONL[poison](t, "testdata/poison.jsonl") {
		switch {
		case p.Kind == "split":
			prev := ""
			for i, m := range p.Messages {
				if got := hygiene.Check(m); len(got) > 0 {
					t.Errorf("%s: part %d is refused alone (%q); a split case must need the join", p, i, got)
				}
				if i == len(p.Messages)-1 {
					if got := hygiene.CheckFollowing(prev, m); len(got) == 0 {
						t.Errorf("%s: not refused when joined", p)
					}
				}
				prev = m
			}
		case p.Kind == "assistant":
			if got := hygiene.CheckRole(memento.RoleAssistant, p.Text); len(got) == 0 {
				t.Errorf("%s: not refused", p)
			}
		default:
			if got := hygiene.Check(p.Text); len(got) == 0 {
				t.Errorf("%s: not refused", p)
			}
		}
	}
}

func TestGatePassesEveryBenign(t *testing.T) {
	for _, b := range readJSONL[benign](t, "testdata/benign.jsonl") {
		if got := hygiene.CheckRole(memento.RoleUser, b.Text); len(got) > 0 {
			t.Errorf("%q refused: %q", b.Text, got)
		}
	}
}
