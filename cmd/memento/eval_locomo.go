package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/eval"
	"github.com/memento-ai/memento/recall"
)

// locomoCurveK is how far the recall@k curve of --plot goes.
const locomoCurveK = 20

// locomoIngestTimeout bounds how long the evaluation waits for the
// background pipeline after ingesting a conversation.
const locomoIngestTimeout = 10 * time.Minute

func (m *Main) evalLocomoCommand() *cobra.Command {
	var data []string
	var k int
	var asJSON, verbose, answer bool
	var plotDir, mode string
	cmd := &cobra.Command{
		Use:   "locomo",
		Short: "Measure evidence recall on LoCoMo conversations, against BM25 and recency",
		Long: `Ingest LoCoMo conversations (each its own user; both speakers' turns, with their
dia_id as message id and their session's date) through the message log, let the
memory pipeline finish, then ask recall every question of categories 1-4 whose
evidence turns exist and score evidence recall@k: the share of the question's
evidence turns among the sources of the top k items. Baselines run on the same
turns in the same run: BM25 over the raw, speaker-prefixed turns with Memento's
tokenizer, stop words and stemmer ("bm25"; "bm25Raw" keeps the query's stop words),
the configured embedder alone ("dense"), and the k most recent turns.

Recall's tunable weights (vector, neighbor, when, expand, coverage) are fitted over
a grid: "inSample" is the setting best on every question; with more than one
conversation, "heldOut" scores each conversation with the setting best on the
others (leave one conversation out). "recall" is recall's defaults.

--plot DIR draws recall@k for k = 1..20 against the baselines and the recall
latencies (PNG). --answer (with an OpenAI-compatible model configured) also answers
every question from the recalled items and scores token F1 against the gold
answers, as the LoCoMo paper does. Without --db it uses a fresh temporary store.`,
		Example: "  memento eval locomo --data ../shared/data/locomo --k 10 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if k < 1 || k > recall.MaxK {
				return memento.Errorf(memento.EINVALID, "--k must be 1 to %d, got %d", recall.MaxK, k)
			}
			if mode != "" && !memento.ValidMode(mode) {
				return memento.Errorf(memento.EINVALID, "--mode must be %s or %s, got %q", memento.ModeSemantic, memento.ModeEpisodic, mode)
			}
			convs, err := eval.ReadLoCoMoFiles(data)
			if err != nil {
				return err
			}
			var answerer eval.Answerer
			if answer {
				if m.Config.LLM.Provider != "openai" {
					return memento.Errorf(memento.EINVALID, "--answer needs an OpenAI-compatible model: set MEMENTO_LLM_BASE_URL and MEMENTO_LLM_MODEL")
				}
				answerer, err = eval.NewChatAnswerer(eval.ChatAnswererConfig{
					BaseURL: m.Config.LLM.BaseURL, APIKey: m.Config.LLM.APIKey, Model: m.Config.LLM.Model,
				})
				if err != nil {
					return err
				}
			}
			if err := m.scratchDB(cmd, "eval.db"); err != nil {
				return err
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			rec, err := newLocomoSystem(ctx, app)
			if err != nil {
				return err
			}
			rec.mode = mode
			emb, err := app.Embedder(ctx)
			if err != nil {
				return err
			}
			opts := eval.LoCoMoOptions{K: k, Answerer: answerer, Embedder: emb,
				Tuning: &eval.LoCoMoTuning{Grid: locomoGrid(), Recall: rec.recallWith}}
			if plotDir != "" {
				opts.CurveK = locomoCurveK
			}
			start := time.Now()
			res, err := eval.LoCoMo(ctx, convs, rec.ingest, rec.recall, opts)
			if err != nil {
				return err
			}
			app.Logger.Info("locomo evaluation done", "questions", res.Questions, "took", time.Since(start).Round(time.Millisecond))
			if plotDir != "" {
				files, err := eval.PlotLoCoMo(plotDir, res)
				if err != nil {
					return err
				}
				for _, f := range files {
					fmt.Fprintln(m.Stderr, "wrote", f)
				}
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			printLocomo(m, res, verbose)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&data, "data", nil, "LoCoMo conversation files or folders of them, such as ../shared/data/locomo (repeatable)")
	cmd.Flags().IntVar(&k, "k", 10, "how many recalled items are scored")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&plotDir, "plot", "", "write PNG charts into this folder")
	cmd.Flags().BoolVar(&answer, "answer", false, "also answer each question with the configured OpenAI-compatible model and score token F1")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "list the questions whose evidence was not all recalled")
	cmd.Flags().StringVar(&mode, "mode", "", "override every attribute's memory mode for the conversations' users: semantic or episodic")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

// locomoSystem is Memento as the LoCoMo evaluation drives it: messages go
// through the message log with the jobs every stored message gets, the
// background workers run the memory pipeline, and questions go to the
// context assembler's recall.
type locomoSystem struct {
	app       *engine.Engine
	assembler *recall.Assembler
	// mode, when set, overrides every attribute's memory mode for the
	// conversations' users.
	mode string

	mu   sync.Mutex
	last map[string]time.Time // the time of each user's newest message
}

func newLocomoSystem(ctx context.Context, app *engine.Engine) (*locomoSystem, error) {
	asm, err := app.Assembler(ctx)
	if err != nil {
		return nil, err
	}
	if err := app.StartWorkers(ctx); err != nil {
		return nil, err
	}
	return &locomoSystem{app: app, assembler: asm, last: map[string]time.Time{}}, nil
}

// ingest appends the messages thread by thread (sessions in order), each
// with its background jobs in the same transaction, and waits until every
// job has ended.
func (s *locomoSystem) ingest(ctx context.Context, user string, msgs []memento.Message) error {
	scope := s.app.Scope(user)
	if s.mode != "" {
		if _, err := s.app.Store.EnsureUser(ctx, scope); err != nil {
			return err
		}
		if err := s.app.Store.SetMemoryMode(ctx, scope, "*", s.mode); err != nil {
			return err
		}
	}
	var threads []string
	byThread := map[string][]memento.Message{}
	var newest time.Time
	for _, msg := range msgs {
		if _, ok := byThread[msg.Thread]; !ok {
			threads = append(threads, msg.Thread)
		}
		byThread[msg.Thread] = append(byThread[msg.Thread], msg)
		if msg.At.After(newest) {
			newest = msg.At
		}
	}
	for _, thread := range threads {
		_, err := s.app.Store.AppendMessages(ctx, scope, thread, byThread[thread], func(msg memento.Message) []memento.JobRequest {
			return s.app.MessageJobs(scope, thread, msg)
		})
		if err != nil {
			return fmt.Errorf("append %s: %w", thread, err)
		}
	}
	if err := s.app.WaitForJobs(ctx, locomoIngestTimeout); err != nil {
		return err
	}
	s.mu.Lock()
	s.last[user] = newest
	s.mu.Unlock()
	return nil
}

// recall asks the assembler, as of just after the user's conversation
// ended, so that recency means what it meant when the questions were
// written.
func (s *locomoSystem) recall(ctx context.Context, user, query string, k int) ([]memento.RecallItem, error) {
	return s.assembler.Recall(ctx, s.query(user, query, k))
}

// query is the recall query of a question, as of just after the user's
// conversation ended.
func (s *locomoSystem) query(user, query string, k int) memento.RecallQuery {
	s.mu.Lock()
	now := s.last[user]
	s.mu.Unlock()
	if !now.IsZero() {
		now = now.Add(time.Hour)
	}
	return memento.RecallQuery{Scope: s.app.Scope(user), Query: query, K: k, Now: now}
}

// recallWith is recall with the weights of a setting of locomoGrid.
func (s *locomoSystem) recallWith(p eval.Params) eval.RecallFunc {
	asm := s.assembler.Tuned(locomoWeights(p))
	return func(ctx context.Context, user, query string, k int) ([]memento.RecallItem, error) {
		return asm.Recall(ctx, s.query(user, query, k))
	}
}

// locomoAxes are the weights of recall that `memento eval locomo` fits:
// every one that is not a scale (BM25's weight is 1, and recency only
// breaks ties), each over a few values around its default. They are fitted
// on the conversations given, and with more than one, on all but the one
// scored (docs/BENCHMARKS.md).
var locomoAxes = []struct {
	name   string
	values []float64
	set    func(*recall.Weights, float64)
}{
	{"vector", []float64{0.1, 0.2}, func(w *recall.Weights, v float64) { w.Vector = v }},
	{"neighbor", []float64{0.4, 0.8}, func(w *recall.Weights, v float64) { w.Neighbor = v }},
	{"when", []float64{0, 0.2}, func(w *recall.Weights, v float64) { w.When = v }},
	{"expand", []float64{0, 0.3}, func(w *recall.Weights, v float64) { w.Expand = v }},
	{"coverage", []float64{0.25, 0.5, 0.75}, func(w *recall.Weights, v float64) { w.Coverage = v }},
}

// locomoWeights are recall's default weights with a setting's values.
func locomoWeights(p eval.Params) recall.Weights {
	w := recall.DefaultWeights
	for _, a := range locomoAxes {
		if v, ok := p[a.name]; ok {
			a.set(&w, v)
		}
	}
	return w
}

// locomoGrid is every combination of locomoAxes' values, recall's
// defaults first (so a setting that only ties with them is not chosen).
func locomoGrid() []eval.Params {
	def := eval.Params{"vector": recall.DefaultWeights.Vector, "neighbor": recall.DefaultWeights.Neighbor,
		"when": recall.DefaultWeights.When, "expand": recall.DefaultWeights.Expand, "coverage": recall.DefaultWeights.Coverage}
	grid := []eval.Params{def}
	var walk func(i int, p eval.Params)
	walk = func(i int, p eval.Params) {
		if i == len(locomoAxes) {
			if !maps.Equal(p, def) {
				grid = append(grid, maps.Clone(p))
			}
			return
		}
		for _, v := range locomoAxes[i].values {
			p[locomoAxes[i].name] = v
			walk(i+1, p)
		}
	}
	walk(0, eval.Params{})
	return grid
}

// printLocomo writes the result for a person.
func printLocomo(m *Main, res *eval.LoCoMoResult, verbose bool) {
	fmt.Fprintf(m.Stdout, "%d conversations, %d questions (categories 1-4; %d skipped for missing evidence)\n", res.Conversations, res.Questions, res.Skipped)
	fmt.Fprintf(m.Stdout, "evidence recall@%d  memento %.3f   bm25 %.3f   bm25 with stop words %.3f   dense %.3f   recency %.3f\n", res.K, res.Recall,
		res.Baselines["bm25"].Recall, res.Baselines["bm25Raw"].Recall, res.Baselines["dense"].Recall, res.Baselines["recency"].Recall)
	if t := res.InSample; t != nil {
		fmt.Fprintf(m.Stdout, "fitted in-sample %.3f (%.2fx bm25) with %v\n", t.Recall, t.VsBM25, t.Params)
	}
	if t := res.HeldOut; t != nil {
		fmt.Fprintf(m.Stdout, "leave one conversation out %.3f (%.2fx bm25)\n", t.Recall, t.VsBM25)
		for _, f := range t.Folds {
			fmt.Fprintf(m.Stdout, "  %s left out: %.3f with %v (fitted on the others: %.3f)\n", f.HeldOut, f.Recall, f.Params, f.FitRecall)
		}
	}
	cats := make([]string, 0, len(res.ByCategory))
	for c := range res.ByCategory {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	names := map[string]string{"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
	for _, c := range cats {
		fmt.Fprintf(m.Stdout, "  category %s %-12s %.3f", c, names[c], res.ByCategory[c])
		if res.HeldOut != nil {
			fmt.Fprintf(m.Stdout, "   held out %.3f", res.HeldOut.ByCategory[c])
		}
		fmt.Fprintf(m.Stdout, "   bm25 %.3f\n", res.Baselines["bm25"].ByCategory[c])
	}
	fmt.Fprintf(m.Stdout, "tokens per query %.1f; recall latency p50 %.2f ms, p99 %.2f ms\n", res.TokensPerQuery, res.RecallP50Ms, res.RecallP99Ms)
	if res.Answer != nil {
		fmt.Fprintf(m.Stdout, "answer token F1 %.3f\n", res.Answer.F1)
	}
	if !verbose {
		return
	}
	for _, d := range res.Details {
		if len(d.Missed) == 0 {
			continue
		}
		fmt.Fprintf(m.Stdout, "MISS %s [%d] %q recall %.2f missed %v\n", d.Conversation, d.Category, d.Question, d.Recall, slices.Clone(d.Missed))
	}
}
