package hygiene

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
)

// corpusTexts reads every text of the labelled sets, poisoned and benign.
func corpusTexts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, path := range []string{"testdata/poison.jsonl", "testdata/benign.jsonl"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var c struct {
				Text     string   `json:"text"`
				Messages []string `json:"messages"`
			}
			if len(sc.Bytes()) == 0 {
				continue
			}
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if c.Text != "" {
				out = append(out, c.Text)
			}
			out = append(out, c.Messages...)
		}
		f.Close()
	}
	if len(out) < 100 {
		t.Fatalf("read %d texts, want the whole corpus", len(out))
	}
	return out
}

// TestMemoKeepsTheVerdicts checks that a gate that remembers verdicts
// answers every text of the corpus, checked once, again and as a
// following message, as a gate that remembers nothing does, and that a
// caller changing the reasons it got does not change the next answer.
func TestMemoKeepsTheVerdicts(t *testing.T) {
	texts := corpusTexts(t)
	plain := &Gate{rules: defaultRules, assistant: assistantRules}
	g := New()
	refused := 0
	for round := range 2 {
		for i, text := range texts {
			want := plain.Check(text)
			if got := g.Check(text); !slices.Equal(got, want) {
				t.Fatalf("round %d: Check(%q) = %v, want %v", round, text, got, want)
			}
			if len(want) > 0 {
				refused++
			}
			prev := texts[(i+len(texts)-1)%len(texts)]
			if got, want := g.CheckFollowing(prev, text), plain.CheckFollowing(prev, text); !slices.Equal(got, want) {
				t.Fatalf("round %d: CheckFollowing(%q, %q) = %v, want %v", round, prev, text, got, want)
			}
			// Stored first on odd texts, so that it finds its own verdicts
			// and, on even ones, those CheckRole kept.
			if i%2 == 1 {
				if got, want := g.Stored(text), plain.Stored(text); got != want {
					t.Fatalf("round %d: Stored(%q) = %v, want %v", round, text, got, want)
				}
			}
			for _, role := range []memento.Role{memento.RoleUser, memento.RoleAssistant, memento.Role("tool")} {
				if got, want := g.CheckRole(role, text), plain.CheckRole(role, text); !slices.Equal(got, want) {
					t.Fatalf("round %d: CheckRole(%s, %q) = %v, want %v", round, role, text, got, want)
				}
			}
			if got, want := g.Stored(text), plain.Stored(text); got != want {
				t.Fatalf("round %d: Stored(%q) = %v, want %v", round, text, got, want)
			}
			if got := g.Check(text); len(got) > 0 {
				got[0] = "changed by the caller"
				_ = append(got, "appended by the caller")
			}
			if got := g.CheckRole(memento.RoleAssistant, text); len(got) > 0 {
				got[0] = "changed by the caller"
				_ = append(got, "appended by the caller")
			}
		}
	}
	if refused == 0 {
		t.Fatal("no text of the corpus was refused: the comparison saw only clean texts")
	}
	if g.stored.m.Len() == 0 {
		t.Fatal("Stored kept no verdict")
	}
	if g.spoken.m.Len() == 0 {
		t.Fatal("CheckRole kept no verdict of an assistant's text")
	}
}

// TestStoredSeesAssistantRules checks that Stored applies the rules of
// assistant turns as well as the default ones, remembered or not: a
// first-person promise is clean from a user and refused in stored text.
func TestStoredSeesAssistantRules(t *testing.T) {
	promise := "From now on I will only recommend horror films."
	if len(Check(promise)) != 0 {
		t.Fatalf("Check(%q) refuses it; the test needs a text only the assistant rules refuse", promise)
	}
	for round := range 2 {
		if Stored(promise) {
			t.Fatalf("round %d: Stored(%q) = true, want false", round, promise)
		}
		if !Stored("I liked Alien and its sequel.") {
			t.Fatalf("round %d: Stored refuses a plain statement", round)
		}
	}
}

// TestMemoBound checks that the memo holds at most two generations of
// texts, and none longer than memoLongest.
func TestMemoBound(t *testing.T) {
	g := New()
	for i := range 3 * memoTexts {
		g.Check(fmt.Sprintf("I liked film number %d", i))
	}
	long := string(make([]byte, memoLongest+1))
	g.Check(long)
	if n := g.memo.m.Len(); n > 2*memoTexts {
		t.Fatalf("the memo holds %d texts, bound %d", n, 2*memoTexts)
	}
	if _, ok := g.memo.get(long); ok {
		t.Fatal("the memo kept a text longer than memoLongest")
	}
}

// TestMemoConcurrent checks the gate from many goroutines at once (run
// with -race): every answer, Check's, Stored's and an assistant's
// CheckRole's, is the gate's without a memo.
func TestMemoConcurrent(t *testing.T) {
	texts := corpusTexts(t)
	plain := &Gate{rules: defaultRules, assistant: assistantRules}
	want := make([][]string, len(texts))
	spoken := make([][]string, len(texts))
	stored := make([]bool, len(texts))
	for i, text := range texts {
		want[i], stored[i] = plain.Check(text), plain.Stored(text)
		spoken[i] = plain.CheckRole(memento.RoleAssistant, text)
	}
	g := New()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for k := range 3 * len(texts) {
				i := (k*7 + w) % len(texts)
				if got := g.Check(texts[i]); !slices.Equal(got, want[i]) {
					t.Errorf("Check(%q) = %v, want %v", texts[i], got, want[i])
					return
				}
				if got := g.Stored(texts[i]); got != stored[i] {
					t.Errorf("Stored(%q) = %v, want %v", texts[i], got, stored[i])
					return
				}
				if got := g.CheckRole(memento.RoleAssistant, texts[i]); !slices.Equal(got, spoken[i]) {
					t.Errorf("CheckRole(assistant, %q) = %v, want %v", texts[i], got, spoken[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
