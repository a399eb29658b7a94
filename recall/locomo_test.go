package recall_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// locomoDir holds the LoCoMo conversations of the shared data folder.
var locomoDir = filepath.Join("..", "..", "shared", "data", "locomo")

// readLoCoMo reads a conversation or skips the test when the data set is
// not there.
func readLoCoMo(t testing.TB, name string) *recall.LoCoMo {
	t.Helper()
	f, err := os.Open(filepath.Join(locomoDir, name))
	if err != nil {
		t.Skipf("LoCoMo data not available: %v", err)
	}
	defer f.Close()
	c, err := recall.ReadLoCoMo(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ingestLoCoMo stores a conversation as one user's threads and runs the
// pipeline over every turn, as the remember jobs would.
func ingestLoCoMo(t testing.TB, db *sqlite.DB, s memento.Scope, c *recall.LoCoMo, emb memento.Embedder, mode string) {
	t.Helper()
	ctx := context.Background()
	if err := db.SetMemoryMode(ctx, s, "*", mode); err != nil {
		t.Fatal(err)
	}
	msgs := c.Messages()
	byThread := map[string][]memento.Message{}
	var threads []string
	for _, m := range msgs {
		if byThread[m.Thread] == nil {
			threads = append(threads, m.Thread)
		}
		byThread[m.Thread] = append(byThread[m.Thread], m)
	}
	for _, th := range threads {
		if _, err := db.AppendMessages(ctx, s, th, byThread[th], nil); err != nil {
			t.Fatal(err)
		}
	}
	p, err := pipeline.New(offline.New(offline.Options{}), db, pipeline.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if _, err := p.Process(ctx, s, m.ID); err != nil {
			t.Fatalf("process %s: %v", m.ID, err)
		}
	}
}

// evidenceRecall is the mean, over the questions of categories 1-4, of
// the share of a question's evidence turns among the sources of the top k
// items.
func evidenceRecall(t testing.TB, r memento.Recaller, s memento.Scope, c *recall.LoCoMo, k int) (float64, int) {
	t.Helper()
	sum, n := 0.0, 0
	for _, qa := range c.QA {
		if qa.Category == 5 || len(qa.Evidence) == 0 {
			continue
		}
		items, err := r.Recall(context.Background(), memento.RecallQuery{Scope: s, Query: qa.Question, K: k})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, it := range items {
			for _, src := range it.Sources {
				got[src] = true
			}
		}
		hit := 0
		for _, e := range qa.Evidence {
			if got[e] {
				hit++
			}
		}
		sum += float64(hit) / float64(len(qa.Evidence))
		n++
	}
	return sum / float64(n), n
}

// TestLoCoMoEvidenceRecall ingests a LoCoMo conversation, episodic mode,
// and checks that recall brings back the evidence turns of its questions,
// better than BM25 alone over the same turns.
func TestLoCoMoEvidenceRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests a whole conversation")
	}
	t.Parallel()
	c := readLoCoMo(t, "30.json")
	opts := sqlitetest.Options()
	opts.Synchronous = "NORMAL" // the test measures recall, not durability
	db := sqlitetest.OpenWith(t, opts)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "locomo-30"}
	emb := offline.NewEmbedder(256)
	ingestLoCoMo(t, db, s, c, emb, memento.ModeEpisodic)

	hybrid, n := evidenceRecall(t, recall.New(db, emb), s, c, 10)
	bm25, _ := evidenceRecall(t, &recall.Messages{Store: db, Weights: recall.Weights{BM25: 1}, Neighbors: -1, Recent: -1}, s, c, 10)
	t.Logf("evidence recall@10 over %d questions: hybrid %.3f, BM25 over raw turns %.3f", n, hybrid, bm25)
	if hybrid < 0.75 {
		t.Errorf("evidence recall@10 = %.3f; want at least 0.75", hybrid)
	}
	if hybrid < 1.2*bm25 {
		t.Errorf("evidence recall@10 = %.3f; want at least 1.2x BM25's %.3f", hybrid, bm25)
	}
}

func TestReadLoCoMo(t *testing.T) {
	t.Parallel()
	c := readLoCoMo(t, "26.json")
	if c.SpeakerA != "Caroline" || c.SpeakerB != "Melanie" || len(c.Sessions) != 19 {
		t.Fatalf("conversation = %s, %s, %d sessions", c.SpeakerA, c.SpeakerB, len(c.Sessions))
	}
	msgs := c.Messages()
	if len(msgs) != 419 {
		t.Errorf("%d messages; want the 419 turns", len(msgs))
	}
	first := msgs[0]
	if first.ID != "D1:1" || first.Thread != "session_1" || first.Role != memento.RoleUser || first.Text[:10] != "Caroline: " {
		t.Errorf("first message = %+v", first)
	}
	if first.At.Format("2006-01-02 15:04") != "2023-05-08 13:56" {
		t.Errorf("first message at %v; want the session's date", first.At)
	}
	for i := 1; i < len(msgs); i++ {
		if !msgs[i].At.After(msgs[i-1].At) && msgs[i].Thread == msgs[i-1].Thread {
			t.Fatalf("messages %s and %s are not in time order", msgs[i-1].ID, msgs[i].ID)
		}
	}
	if len(c.QA) != 199 || c.QA[0].Answer != "7 May 2023" || c.QA[1].Answer != "2022" {
		t.Errorf("qa: %d items, first answers %q, %q", len(c.QA), c.QA[0].Answer, c.QA[1].Answer)
	}
}
