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
}

// LoCoMoResult is the outcome of `memento eval locomo`. Its JSON shape is a
// contract: {"conversations","questions","k","recall","byCategory":{"1".."4"},
// "tokensPerQuery","recallP50Ms","recallP99Ms","baselines":{"bm25":{"recall"},
// "recency":{"recall"}}}, with "answer" added only when answers were made.
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

// BaselineRecall is a baseline's evidence recall@k.
type BaselineRecall struct {
	Recall float64 `json:"recall"`
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
		{"recency", NewRecency(turns).Recall},
	}

	type question struct {
		conv string
		user string
		qa   recall.LoCoMoQA
		ev   []string
	}
	res := &LoCoMoResult{Conversations: len(convs), K: opts.K, ByCategory: map[string]float64{}, Baselines: map[string]BaselineRecall{}}
	var qs []question
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
			qs = append(qs, question{conv: c.Name, user: user, qa: qa, ev: ev})
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
	res.Baselines["bm25"] = BaselineRecall{Recall: round4(sums["bm25"] / n)}
	res.Baselines["recency"] = BaselineRecall{Recall: round4(sums["recency"] / n)}
	for c, s := range catSum {
		res.ByCategory[strconv.Itoa(c)] = round4(s / float64(catN[c]))
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
