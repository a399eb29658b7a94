package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/recall"
)

// RecallFunc brings back at most k items for a question a user asks, best
// first. Memento's recall, the BM25 baseline and the recency baseline are
// all RecallFuncs, so one scoring routine measures them alike.
type RecallFunc func(ctx context.Context, user, query string, k int) ([]memento.RecallItem, error)

// IngestFunc stores a conversation's messages as the user's (each message
// carries its thread, id and time) and returns once the memory pipeline has
// processed them, so that recall sees everything.
type IngestFunc func(ctx context.Context, user string, msgs []memento.Message) error

// LoCoMoConversation is one conversation of the LoCoMo data set with the
// name it is reported under (its file name, such as "26").
type LoCoMoConversation struct {
	Name string
	Data *recall.LoCoMo
}

// ReadLoCoMoFiles reads LoCoMo conversations from files and folders (every
// *.json file in a folder, in name order); a file named twice is read once,
// and two files of the same name in different places are refused.
// Errors: EINVALID.
func ReadLoCoMoFiles(paths []string) ([]LoCoMoConversation, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, memento.Errorf(memento.EINVALID, "LoCoMo data %s: %v", p, err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := filepath.Glob(filepath.Join(p, "*.json"))
		if err != nil {
			return nil, memento.Errorf(memento.EINVALID, "LoCoMo data %s: %v", p, err)
		}
		if len(found) == 0 {
			return nil, memento.Errorf(memento.EINVALID, "LoCoMo data folder %s holds no .json file", p)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	if len(files) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "no LoCoMo data given")
	}
	var out []LoCoMoConversation
	seen, seenFile := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		// A file named twice (directly and through its folder) is read
		// once.
		if abs, err := filepath.Abs(f); err == nil {
			if seenFile[abs] {
				continue
			}
			seenFile[abs] = true
		}
		r, err := os.Open(f)
		if err != nil {
			return nil, memento.Errorf(memento.EINVALID, "LoCoMo data %s: %v", f, err)
		}
		c, err := recall.ReadLoCoMo(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if seen[name] {
			return nil, memento.Errorf(memento.EINVALID, "LoCoMo conversation %q is given twice", name)
		}
		seen[name] = true
		out = append(out, LoCoMoConversation{Name: name, Data: c})
	}
	return out, nil
}

// LoCoMoOptions tune the LoCoMo evaluation.
type LoCoMoOptions struct {
	// K is how many recalled items are scored. Default 10.
	K int
	// CurveK, when positive, also measures recall@k for k = 1..CurveK
	// (from the top CurveK items of one call per question) for the plot.
	CurveK int
	// UserPrefix names each conversation's user: prefix + name. Default
	// "locomo-".
	UserPrefix string
	// Answerer, when set, answers every question from Memento's recalled
	// items and the answers are scored with LoCoMoF1.
	Answerer Answerer
	// Progress, when set, is called after each question with the number
	// done and the total.
	Progress func(done, total int)
	// Embedder, when set, is the embedder of the dense baseline (the one
	// Memento is configured with).
	Embedder memento.Embedder
	// Tuning, when set, is what may be fitted: every setting of its grid
	// is measured, the in-sample figure is that of the best setting on
	// every question, and with more than one conversation the held-out
	// figure scores each conversation with the setting best on the
	// others (leave one conversation out).
	Tuning *LoCoMoTuning
}

// LoCoMoTuning is what the LoCoMo evaluation may fit of a system: a grid
// of settings, the system's defaults first, and the system's recall with
// a setting. A setting that ties with an earlier one on the questions it
// is fitted on loses to it, so the defaults are kept unless another
// setting does better.
type LoCoMoTuning struct {
	Grid   []Params
	Recall func(Params) RecallFunc
}

// Params is one setting of a system's tunable parameters, by name.
type Params map[string]float64

// LoCoMoResult is the outcome of `memento eval locomo`. Its JSON shape is a
// contract: {"conversations","questions","k","recall","byCategory":{"1".."4"},
// "tokensPerQuery","recallP50Ms","recallP99Ms","baselines":{"bm25","bm25Raw",
// "recency", and "dense" with an embedder: {"recall","byCategory"}}}, with
// "answer" added only when answers were made, and "inSample" (and with more
// than one conversation "heldOut") {"recall","byCategory","vsBM25",
// "params"|"folds"} only with Tuning. Recall and ByCategory are those of
// the RecallFunc given, the system's defaults.
//
// Evidence recall@k of a question is the share of its evidence turns
// (dia_ids) found among the sources of the top k items; Recall is its mean
// over every question of categories 1-4 whose evidence turns all exist
// (category 5 questions have no answer in the conversation), and
// ByCategory the mean per category. TokensPerQuery is the mean estimated
// length (memento.EstimateTokens) of the recalled items rendered as a
// prompt holds them. RecallP50Ms and RecallP99Ms are latencies of
// Memento's recall calls.
type LoCoMoResult struct {
	Conversations  int                       `json:"conversations"`
	Questions      int                       `json:"questions"`
	K              int                       `json:"k"`
	Recall         float64                   `json:"recall"`
	ByCategory     map[string]float64        `json:"byCategory"`
	TokensPerQuery float64                   `json:"tokensPerQuery"`
	RecallP50Ms    float64                   `json:"recallP50Ms"`
	RecallP99Ms    float64                   `json:"recallP99Ms"`
	Baselines      map[string]BaselineRecall `json:"baselines"`
	Answer         *AnswerScore              `json:"answer,omitempty"`
	// InSample is recall with the setting of LoCoMoOptions.Tuning that is
	// best on every question; HeldOut, with more than one conversation,
	// scores each conversation with the setting best on the others. Both
	// are absent without Tuning.
	InSample *TunedRecall `json:"inSample,omitempty"`
	HeldOut  *TunedRecall `json:"heldOut,omitempty"`

	// Curves holds recall@k for k = 1..CurveK by system ("memento",
	// "bm25", "recency"), index k-1; nil without CurveK.
	Curves map[string][]float64 `json:"-"`
	// LatenciesMs are Memento's recall latencies, one per question.
	LatenciesMs []float64 `json:"-"`
	// Details has one entry per scored question, in order.
	Details []LoCoMoQuestion `json:"-"`
	// Skipped counts questions of categories 1-4 left out because an
	// evidence turn is missing (or none is given).
	Skipped int `json:"-"`
}

// BaselineRecall is a baseline's evidence recall@k, overall and by
// category.
type BaselineRecall struct {
	Recall     float64            `json:"recall"`
	ByCategory map[string]float64 `json:"byCategory,omitempty"`
}

// TunedRecall is evidence recall@k with fitted parameters: overall, by
// category, and as a multiple of the BM25 baseline's recall on the same
// questions (VsBM25). Params is the setting fitted in-sample; Folds has one
// entry per conversation left out.
type TunedRecall struct {
	Recall     float64            `json:"recall"`
	ByCategory map[string]float64 `json:"byCategory"`
	VsBM25     float64            `json:"vsBM25"`
	Params     Params             `json:"params,omitempty"`
	Folds      []LoCoMoFold       `json:"folds,omitempty"`
}

// LoCoMoFold is one fold of leave-one-conversation-out: the setting fitted
// on the other conversations (with its recall there, FitRecall) and its
// recall on the conversation left out.
type LoCoMoFold struct {
	HeldOut   string  `json:"heldOut"`
	Questions int     `json:"questions"`
	Params    Params  `json:"params"`
	FitRecall float64 `json:"fitRecall"`
	Recall    float64 `json:"recall"`
}

// AnswerScore is the LoCoMo paper's token F1 of answers made from
// Memento's recalled items, overall and by category.
type AnswerScore struct {
	F1         float64            `json:"f1"`
	ByCategory map[string]float64 `json:"byCategory"`
}

// LoCoMoQuestion is how one question fared.
type LoCoMoQuestion struct {
	Conversation string   `json:"conversation"`
	Question     string   `json:"question"`
	Category     int      `json:"category"`
	Evidence     []string `json:"evidence"`
	// Recall, BM25 and Recency are the evidence recall@K of each system.
	Recall  float64 `json:"recall"`
	BM25    float64 `json:"bm25"`
	Recency float64 `json:"recency"`
	// Missed are the evidence turns Memento's top K did not hold.
	Missed    []string `json:"missed,omitempty"`
	Tokens    int      `json:"tokens"`
	LatencyMs float64  `json:"latencyMs"`
	Answer    string   `json:"answer,omitempty"`
	Gold      string   `json:"gold,omitempty"`
	F1        float64  `json:"f1,omitempty"`
}

// LoCoMo ingests every conversation as its own user with ingest, then asks
// every question of categories 1-4 whose evidence turns exist of recall
// and of the two baselines built from the same turns (BM25 and recency),
// and scores them (see LoCoMoResult). Errors from ingest, recall or the
// answerer end the run.
func LoCoMo(ctx context.Context, convs []LoCoMoConversation, ingest IngestFunc, recallFn RecallFunc, opts LoCoMoOptions) (*LoCoMoResult, error) {
	if opts.K <= 0 {
		opts.K = 10
	}
	if opts.UserPrefix == "" {
		opts.UserPrefix = "locomo-"
	}
	turns := map[string][]memento.Message{}
	for _, c := range convs {
		user := opts.UserPrefix + c.Name
		msgs := c.Data.Messages()
		if err := ingest(ctx, user, msgs); err != nil {
			return nil, fmt.Errorf("ingest conversation %s: %w", c.Name, err)
		}
		turns[user] = msgs
	}
	systems := []struct {
		name string
		fn   RecallFunc
	}{
		{"memento", recallFn},
		{"bm25", NewBM25(turns).Recall},
		{"bm25Raw", NewRawBM25(turns).Recall},
		{"recency", NewRecency(turns).Recall},
	}
	if opts.Embedder != nil {
		dense, err := NewDense(ctx, turns, opts.Embedder)
		if err != nil {
			return nil, err
		}
		systems = append(systems, struct {
			name string
			fn   RecallFunc
		}{"dense", dense.Recall})
	}

	res := &LoCoMoResult{Conversations: len(convs), K: opts.K, ByCategory: map[string]float64{}, Baselines: map[string]BaselineRecall{}}
	var qs []locomoQuestion
	for _, c := range convs {
		user := opts.UserPrefix + c.Name
		ids := map[string]bool{}
		for _, m := range turns[user] {
			ids[m.ID] = true
		}
		for _, qa := range c.Data.QA {
			if qa.Category < 1 || qa.Category > 4 {
				continue
			}
			ev := EvidenceIDs(qa.Evidence)
			if len(ev) == 0 || !allIn(ids, ev) {
				res.Skipped++
				continue
			}
			qs = append(qs, locomoQuestion{conv: c.Name, user: user, qa: qa, ev: ev})
		}
	}
	res.Questions = len(qs)
	if len(qs) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "the conversations hold no question of categories 1-4 with existing evidence")
	}

	if opts.CurveK > 0 {
		res.Curves = map[string][]float64{}
		for _, s := range systems {
			res.Curves[s.name] = make([]float64, opts.CurveK)
		}
	}
	sums := map[string]float64{}
	baseCat := map[string]map[int]float64{}
	catSum, catN := map[int]float64{}, map[int]int{}
	var f1Sum float64
	f1Cat := map[int]float64{}
	tokens := 0
	for i, q := range qs {
		d := LoCoMoQuestion{Conversation: q.conv, Question: q.qa.Question, Category: q.qa.Category, Evidence: q.ev}
		for _, s := range systems {
			start := time.Now()
			items, err := s.fn(ctx, q.user, q.qa.Question, opts.K)
			took := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("%s recall, conversation %s, question %q: %w", s.name, q.conv, q.qa.Question, err)
			}
			r := EvidenceRecall(q.ev, items, opts.K)
			sums[s.name] += r
			if baseCat[s.name] == nil {
				baseCat[s.name] = map[int]float64{}
			}
			baseCat[s.name][q.qa.Category] += r
			switch s.name {
			case "memento":
				d.Recall, d.Missed = r, missed(q.ev, items, opts.K)
				d.LatencyMs = float64(took.Microseconds()) / 1000
				res.LatenciesMs = append(res.LatenciesMs, d.LatencyMs)
				text := recall.Render(&recall.Context{Items: items})
				d.Tokens = memento.EstimateTokens(text)
				tokens += d.Tokens
				catSum[q.qa.Category] += r
				catN[q.qa.Category]++
				if opts.Answerer != nil {
					ans, err := opts.Answerer.Answer(ctx, q.qa.Question, text)
					if err != nil {
						return nil, answerError(q.conv, i, err)
					}
					d.Answer, d.Gold = ans, q.qa.Answer
					d.F1 = LoCoMoF1(ans, q.qa.Answer, q.qa.Category)
					f1Sum += d.F1
					f1Cat[q.qa.Category] += d.F1
				}
			case "bm25":
				d.BM25 = r
			case "recency":
				d.Recency = r
			}
			if opts.CurveK > 0 {
				curveItems := items
				if opts.CurveK > opts.K {
					if curveItems, err = s.fn(ctx, q.user, q.qa.Question, opts.CurveK); err != nil {
						return nil, fmt.Errorf("%s recall, conversation %s, question %q: %w", s.name, q.conv, q.qa.Question, err)
					}
				}
				for k := 1; k <= opts.CurveK; k++ {
					res.Curves[s.name][k-1] += EvidenceRecall(q.ev, curveItems, k)
				}
			}
		}
		res.Details = append(res.Details, d)
		if opts.Progress != nil {
			opts.Progress(i+1, len(qs))
		}
	}
	n := float64(len(qs))
	res.Recall = round4(sums["memento"] / n)
	for _, s := range systems[1:] {
		res.Baselines[s.name] = BaselineRecall{Recall: round4(sums[s.name] / n), ByCategory: byCategory(baseCat[s.name], catN)}
	}
	res.ByCategory = byCategory(catSum, catN)
	if opts.Tuning != nil && len(opts.Tuning.Grid) > 0 {
		if err := tune(ctx, res, qs, opts, sums["bm25"]/n); err != nil {
			return nil, err
		}
	}
	res.TokensPerQuery = round4(float64(tokens) / n)
	res.RecallP50Ms = round4(Percentile(res.LatenciesMs, 50))
	res.RecallP99Ms = round4(Percentile(res.LatenciesMs, 99))
	for name, c := range res.Curves {
		for i := range c {
			c[i] = round4(c[i] / n)
		}
		res.Curves[name] = c
	}
	if opts.Answerer != nil {
		res.Answer = &AnswerScore{F1: round4(f1Sum / n), ByCategory: map[string]float64{}}
		for c, s := range f1Cat {
			res.Answer.ByCategory[strconv.Itoa(c)] = round4(s / float64(catN[c]))
		}
		for c := range catN {
			if _, ok := res.Answer.ByCategory[strconv.Itoa(c)]; !ok {
				res.Answer.ByCategory[strconv.Itoa(c)] = 0
			}
		}
	}
	return res, nil
}

// locomoQuestion is a question to score: its conversation, the user that
// conversation was ingested as, and its evidence turn ids.
type locomoQuestion struct {
	conv string
	user string
	qa   recall.LoCoMoQA
	ev   []string
}

// byCategory turns sums of recall by category into means.
func byCategory(sum map[int]float64, n map[int]int) map[string]float64 {
	out := map[string]float64{}
	for c, k := range n {
		out[strconv.Itoa(c)] = round4(sum[c] / float64(k))
	}
	return out
}

// tune measures every setting of opts.Tuning's grid on every question and
// sets res.InSample (the setting best on all questions) and, with more
// than one conversation, res.HeldOut: each conversation scored with the
// setting best on the others. bm25 is the BM25 baseline's recall on the
// same questions.
func tune(ctx context.Context, res *LoCoMoResult, qs []locomoQuestion, opts LoCoMoOptions, bm25 float64) error {
	grid := opts.Tuning.Grid
	scores := make([][]float64, len(grid))
	for g, p := range grid {
		fn := opts.Tuning.Recall(p)
		scores[g] = make([]float64, len(qs))
		for i, q := range qs {
			items, err := fn(ctx, q.user, q.qa.Question, opts.K)
			if err != nil {
				return fmt.Errorf("tuned recall %v, conversation %s, question %q: %w", p, q.conv, q.qa.Question, err)
			}
			scores[g][i] = EvidenceRecall(q.ev, items, opts.K)
		}
	}
	// best is the first setting of the highest mean recall over the
	// questions in admits, with that mean.
	best := func(in func(int) bool) (int, float64) {
		bestG, bestMean := 0, -1.0
		for g := range grid {
			sum, n := 0.0, 0
			for i := range qs {
				if in(i) {
					sum += scores[g][i]
					n++
				}
			}
			if n == 0 {
				continue
			}
			if m := sum / float64(n); m > bestMean+1e-12 {
				bestG, bestMean = g, m
			}
		}
		return bestG, bestMean
	}
	summarise := func(per []float64) *TunedRecall {
		sum := 0.0
		catSum, catN := map[int]float64{}, map[int]int{}
		for i, r := range per {
			sum += r
			catSum[qs[i].qa.Category] += r
			catN[qs[i].qa.Category]++
		}
		t := &TunedRecall{Recall: round4(sum / float64(len(per))), ByCategory: byCategory(catSum, catN)}
		if bm25 > 0 {
			t.VsBM25 = round4(sum / float64(len(per)) / bm25)
		}
		return t
	}
	g, _ := best(func(int) bool { return true })
	res.InSample = summarise(scores[g])
	res.InSample.Params = grid[g]

	var convs []string
	for _, q := range qs {
		if !slices.Contains(convs, q.conv) {
			convs = append(convs, q.conv)
		}
	}
	if len(convs) < 2 {
		return nil
	}
	held := make([]float64, len(qs))
	var folds []LoCoMoFold
	for _, c := range convs {
		g, fit := best(func(i int) bool { return qs[i].conv != c })
		f := LoCoMoFold{HeldOut: c, Params: grid[g], FitRecall: round4(fit)}
		sum := 0.0
		for i, q := range qs {
			if q.conv == c {
				held[i] = scores[g][i]
				sum += held[i]
				f.Questions++
			}
		}
		f.Recall = round4(sum / float64(f.Questions))
		folds = append(folds, f)
	}
	res.HeldOut = summarise(held)
	res.HeldOut.Folds = folds
	return nil
}

// EvidenceIDs normalises a question's evidence list: LoCoMo sometimes packs
// several turn ids in one string ("D8:6; D9:17"), so each entry is split
// at semicolons, commas and spaces; duplicates are dropped, order kept.
func EvidenceIDs(evidence []string) []string {
	var out []string
	for _, e := range evidence {
		for _, id := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' }) {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// EvidenceRecall is the share of the evidence ids found among the sources
// of the first k items (every item when k is not positive or beyond their
// number). An empty evidence list scores 0.
func EvidenceRecall(evidence []string, items []memento.RecallItem, k int) float64 {
	if len(evidence) == 0 {
		return 0
	}
	return float64(len(evidence)-len(missed(evidence, items, k))) / float64(len(evidence))
}

// missed returns the evidence ids not among the sources of the first k
// items.
func missed(evidence []string, items []memento.RecallItem, k int) []string {
	if k <= 0 || k > len(items) {
		k = len(items)
	}
	got := map[string]bool{}
	for _, it := range items[:k] {
		for _, s := range it.Sources {
			got[s] = true
		}
	}
	var out []string
	for _, e := range evidence {
		if !got[e] {
			out = append(out, e)
		}
	}
	return out
}

func allIn(set map[string]bool, ids []string) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// Percentile returns the p-th percentile (0-100) of values by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it. It returns 0 for no values and does not change values.
func Percentile(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	rank := int(p/100*float64(len(s)) + 0.999999999)
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// round4 keeps four decimals, so results read well in JSON.
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// PlotLoCoMo draws recall@k for k = 1..CurveK of Memento and the
// baselines into dir/locomo-recall-at-k.png and the recall latencies into
// dir/locomo-recall-latency.png, and returns the files written.
func PlotLoCoMo(dir string, res *LoCoMoResult) ([]string, error) {
	var files []string
	if len(res.Curves) > 0 {
		series := map[string][]XY{}
		for name, c := range res.Curves {
			pts := make([]XY, len(c))
			for i, v := range c {
				pts[i] = XY{X: float64(i + 1), Y: v}
			}
			series[name] = pts
		}
		path := filepath.Join(dir, "locomo-recall-at-k.png")
		title := fmt.Sprintf("LoCoMo evidence recall@k (%d questions, %d conversations)", res.Questions, res.Conversations)
		if err := LineChart(path, title, "k (items recalled)", "evidence recall@k", series); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	if len(res.LatenciesMs) > 0 {
		path := filepath.Join(dir, "locomo-recall-latency.png")
		title := fmt.Sprintf("LoCoMo recall latency (p50 %.2f ms, p99 %.2f ms)", res.RecallP50Ms, res.RecallP99Ms)
		if err := Histogram(path, title, "ms", res.LatenciesMs, 30); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}
