package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// Keyword search gives the ranking of the SQLite store's FTS5 tables: the
// same terms (package fulltext's tokenizer and Porter stemmer, which the
// FTS5 tables are configured to match), and BM25 computed as FTS5's
// bm25() computes it:
//
//	score(d) = sum over query words w of idf(w) * f(w,d) * (k1+1) / (f(w,d) + k1*(1 - b + b*len(d)/avglen))
//	idf(w)   = log((N - n(w) + 0.5) / (n(w) + 0.5)), at least 1e-6
//
// where f is the column-weighted frequency (memories: value 1.0,
// attribute 0.5; messages: text 1.0), len(d) counts the tokens of every
// column plus the one scope token an FTS5 row carries, and N, n(w) and
// avglen are over the whole index (every user), as in an FTS5 table. The
// terms are stored by the write paths (memoryRows, indexMemory, the
// insert of messages), which count what they add in the corpus totals and
// each term's document count (search_stats, term_stats; searchCounts),
// and triggers count what leaves the index; storetest checks the scores against a reference
// computation on both stores. A query reads a few rows of the totals and,
// per word, at most memento.MaxTermMatches entries of the user's index.

// docTerms returns a document's weighted term frequencies and its length.
func docTerms(cols ...weightedText) (map[string]float64, int) {
	freq := map[string]float64{}
	n := 1 // the scope token
	for _, c := range cols {
		for _, t := range fulltext.Tokens(c.text) {
			freq[t] += c.weight
			n++
		}
	}
	return freq, n
}

type weightedText struct {
	text   string
	weight float64
}

// indexTerms returns a document's terms in order with their weighted
// frequencies, and its length.
func indexTerms(cols ...weightedText) ([]string, []float64, int) {
	freq, n := docTerms(cols...)
	terms := make([]string, 0, len(freq))
	for t := range freq {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	weights := make([]float64, len(terms))
	for i, t := range terms {
		weights[i] = freq[t]
	}
	return terms, weights, n
}

// index stores a document's terms in kind's index and counts them, in
// one round trip.
func index(ctx context.Context, tx pgx.Tx, kind string, s memento.Scope, pk int64, cols ...weightedText) error {
	terms, weights, n := indexTerms(cols...)
	counts := newSearchCounts(kind)
	counts.add(terms, n)
	if err := execCounted(ctx, tx, counts, `WITH d AS (INSERT INTO `+kind+`_search (pk, tenant_id, user_id, len) VALUES ($1, $2, $3, $6))
		INSERT INTO `+kind+`_terms (pk, tenant_id, user_id, term, freq, len)
		SELECT $1, $2, $3, t, f, $6 FROM unnest($4::text[], $5::float8[]) AS x(t, f)`, pk, s.Tenant, s.User, terms, weights, n); err != nil {
		return fmt.Errorf("index %s %d: %w", kind, pk, err)
	}
	return nil
}

// execCounted runs a statement that indexes documents and the one that
// counts them (counts), in one round trip.
func execCounted(ctx context.Context, tx pgx.Tx, counts *searchCounts, sql string, args ...any) error {
	return sendCounted(ctx, tx, counts, func(b *pgx.Batch) { b.Queue(sql, args...) }, func(res pgx.BatchResults) error {
		_, err := res.Exec()
		return err
	})
}

// sendCounted sends the statements queue queues, which index documents,
// and the one that counts them (counts), in one round trip, and reads
// their answers with read and counts.read.
func sendCounted(ctx context.Context, tx pgx.Tx, counts *searchCounts, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	queue(b)
	counts.queue(b)
	return sendBatch(ctx, tx, b, func(res pgx.BatchResults) error {
		if err := read(res); err != nil {
			return err
		}
		return counts.read(res)
	})
}

// searchCounts adds up what a writer's inserts into one index (kind:
// "memory" or "message") add to its counters, the documents holding each
// term and the documents and tokens in all, for one statement to count
// them (search_count, migration 0016): no trigger counts an insert, so
// every statement that inserts into *_search and *_terms has its
// documents added here and the sum queued in its round trip.
type searchCounts struct {
	kind         string
	terms        map[string]int64
	docs, tokens int64
}

func newSearchCounts(kind string) *searchCounts {
	return &searchCounts{kind: kind, terms: map[string]int64{}}
}

// add counts one document of n tokens holding terms (each once, as
// indexTerms returns them).
func (c *searchCounts) add(terms []string, n int) {
	for _, t := range terms {
		c.terms[t]++
	}
	c.docs++
	c.tokens += int64(n)
}

// queue queues the statement that counts what was added, if anything
// was; read reads its answer.
func (c *searchCounts) queue(b *pgx.Batch) {
	if c.docs == 0 {
		return
	}
	terms := make([]string, 0, len(c.terms))
	for t := range c.terms {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	ns := make([]int64, len(terms))
	for i, t := range terms {
		ns[i] = c.terms[t]
	}
	b.Queue(`SELECT search_count($1, $2::text[], $3::bigint[], $4, $5)`, c.kind, terms, ns, c.docs, c.tokens)
}

func (c *searchCounts) read(res pgx.BatchResults) error {
	if c.docs == 0 {
		return nil
	}
	if _, err := res.Exec(); err != nil {
		return fmt.Errorf("count the %s index: %w", c.kind, err)
	}
	return nil
}

// indexMemory indexes a current memory: its value and its attribute.
func indexMemory(ctx context.Context, tx pgx.Tx, s memento.Scope, pk int64, attribute, value string) error {
	return index(ctx, tx, "memory", s, pk, weightedText{value, 1}, weightedText{attribute, 0.5})
}

// keywordQuery is a query's words prepared for ranking: the term of each
// discriminating word and its IDF, and the index's average length.
type keywordQuery struct {
	terms  []string
	idfs   []float64
	avgLen float64
}

// prepareKeywords returns the terms of the query's words (fulltext
// QueryWords) that match some of the user's documents in the index but at
// most memento.MaxTermMatches of them, with their IDF over the whole
// index. It returns nil when no word is left.
func prepareKeywords(ctx context.Context, tx pgx.Tx, kind string, s memento.Scope, query string) (*keywordQuery, error) {
	words := fulltext.QueryWords(query)
	var terms []string
	for _, w := range words {
		if t := fulltext.Term(w); t != "" {
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return nil, nil
	}
	// One round trip: the index's totals and, per word, the user's
	// matches (counted up to one past the bound) and every user's.
	rows, err := tx.Query(ctx, `SELECT w.term,
			(SELECT count(*) FROM (SELECT 1 FROM `+kind+`_terms AS t WHERE t.tenant_id = $1 AND t.user_id = $2 AND t.term = w.term LIMIT $4) AS mine),
			(SELECT coalesce(sum(docs), 0) FROM term_stats AS ts WHERE ts.kind = $5 AND ts.term = w.term),
			tot.docs, tot.tokens
		FROM unnest($3::text[]) WITH ORDINALITY AS w(term, ord),
			(SELECT coalesce(sum(docs), 0) AS docs, coalesce(sum(tokens), 0) AS tokens FROM search_stats WHERE kind = $5) AS tot
		ORDER BY w.ord`, s.Tenant, s.User, terms, memento.MaxTermMatches+1, kind)
	if err != nil {
		return nil, fmt.Errorf("count matches: %w", err)
	}
	defer rows.Close()
	q := &keywordQuery{}
	for rows.Next() {
		var term string
		var mine, hits, docs, tokens int64
		if err := rows.Scan(&term, &mine, &hits, &docs, &tokens); err != nil {
			return nil, fmt.Errorf("count matches: %w", err)
		}
		if docs <= 0 || mine == 0 || mine > memento.MaxTermMatches {
			continue
		}
		q.avgLen = float64(tokens) / float64(docs)
		idf := math.Log((float64(docs) - float64(hits) + 0.5) / (float64(hits) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		q.terms = append(q.terms, term)
		q.idfs = append(q.idfs, idf)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count matches: %w", err)
	}
	if len(q.terms) == 0 {
		return nil, nil
	}
	return q, nil
}

// rankSQL returns the query that ranks the user's documents of kind by
// BM25 over the terms $3 with IDFs $4 and average length $5, best first,
// at most $6. With a period it keeps the rows of table whose timeCol is in
// [$7, $8). Without one it reads nothing but the user's entries of the
// terms index (the length is stored with each term), at most
// memento.MaxTermMatches per word.
func rankSQL(kind, table, timeCol string, period bool) string {
	join := ""
	if period {
		join = fmt.Sprintf(`JOIN %s AS k ON k.pk = t.pk AND k.%s >= $7 AND k.%s < $8`, table, timeCol, timeCol)
	}
	return fmt.Sprintf(`SELECT t.pk, sum(q.idf * t.freq * %[3]g / (t.freq + %[4]g * (1 - %[5]g + %[5]g * t.len / $5::float8))) AS score
		FROM unnest($3::text[], $4::float8[]) AS q(term, idf)
		JOIN %[1]s_terms AS t ON t.term = q.term AND t.tenant_id = $1 AND t.user_id = $2
		%[2]s
		GROUP BY t.pk ORDER BY score DESC, t.pk LIMIT $6`,
		kind, join, fulltext.BM25K1+1, fulltext.BM25K1, fulltext.BM25B)
}

// rankArgs are the arguments of rankSQL's query (and the first of the
// queries built on it), and the number of the next one.
func rankArgs(s memento.Scope, kq *keywordQuery, limit int, p [2]int64) ([]any, int) {
	args := []any{s.Tenant, s.User, kq.terms, kq.idfs, kq.avgLen, limit}
	if p != allTime {
		args = append(args, p[0], p[1])
	}
	return args, len(args) + 1
}

// allTime is the period of a query without a date.
var allTime = [2]int64{math.MinInt64, math.MaxInt64}

// periods returns the time ranges (stored nanoseconds) the keyword
// matches are taken from: all time, and the query's period when it has
// one.
func periods(q memento.CandidateQuery) [][2]int64 {
	out := [][2]int64{allTime}
	if !q.From.IsZero() || !q.To.IsZero() {
		p := allTime
		if !q.From.IsZero() {
			p[0] = nanos(q.From)
		}
		if !q.To.IsZero() {
			p[1] = nanos(q.To)
		}
		out = append(out, p)
	}
	return out
}

const memoryCandidateColumns = `m.id, m.kind, m.attribute, m.value, m.valid_from, m.sources, m.thread_id, coalesce(v.embedder, ''), v.embedding, m.periods`

func scanMemoryCandidate(r pgx.Row, extra ...any) (memento.RecallCandidate, error) {
	var c memento.RecallCandidate
	var from int64
	var sources, emb []byte
	var periods *string
	dest := append([]any{&c.ID, &c.Kind, &c.Attribute, &c.Text, &from, &sources, &c.Thread, &c.Embedder, &emb, &periods}, extra...)
	if err := r.Scan(dest...); err != nil {
		return c, err
	}
	c.At, c.Vector = fromNanos(from), vectorFrom(emb)
	if err := json.Unmarshal(sources, &c.Sources); err != nil {
		return c, fmt.Errorf("decode sources of memory %s: %w", c.ID, err)
	}
	if err := readPeriods(&c, periods); err != nil {
		return c, fmt.Errorf("memory %s: %w", c.ID, err)
	}
	return c, nil
}

// MemoryCandidates returns the user's current memories for recall: the
// q.Keyword best BM25 matches of q.Query over value and attribute (also
// within q's period, when it has one) and the q.Recent most recently
// valid, each once, with their embeddings, read in one snapshot. The
// vector part of recall is computed by the caller over this bounded set.
// Errors: EINVALID.
func (db *DB) MemoryCandidates(ctx context.Context, s memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	var out []memento.RecallCandidate
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		out = []memento.RecallCandidate{}
		seen := map[string]bool{}
		add := func(rows pgx.Rows, ranked bool) error {
			defer rows.Close()
			for rows.Next() {
				var score float64
				var c memento.RecallCandidate
				var err error
				if ranked {
					c, err = scanMemoryCandidate(rows, &score)
				} else {
					c, err = scanMemoryCandidate(rows)
				}
				if err != nil {
					return err
				}
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
				c.BM25 = score
				out = append(out, c)
			}
			return rows.Err()
		}
		var kq *keywordQuery
		if q.Keyword > 0 {
			if kq, err = prepareKeywords(ctx, tx, "memory", s, q.Query); err != nil {
				return err
			}
		}
		if kq != nil {
			for _, p := range periods(q) {
				args, _ := rankArgs(s, kq, q.Keyword, p)
				rows, err := tx.Query(ctx, `SELECT `+memoryCandidateColumns+`, top.score FROM (`+rankSQL("memory", "memories", "valid_from", p != allTime)+`) AS top
					JOIN memories AS m ON m.pk = top.pk LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
					ORDER BY top.score DESC, m.pk`, args...)
				if err != nil {
					return err
				}
				if err := add(rows, true); err != nil {
					return err
				}
			}
		}
		if q.Recent > 0 {
			rows, err := tx.Query(ctx, `SELECT `+memoryCandidateColumns+` FROM memories AS m
				LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
				WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.valid_to IS NULL
				ORDER BY m.valid_from DESC, m.pk DESC LIMIT $3`, s.Tenant, s.User, q.Recent)
			if err != nil {
				return err
			}
			return add(rows, false)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory candidates: %w", err)
	}
	return out, nil
}

const messageCandidateColumns = `m.id, m.thread_id, m.seq, m.role, m.text, m.at, coalesce(v.embedder, ''), v.embedding, m.periods`

// notRejected leaves out messages the pipeline refused as instructions to
// the system.
const notRejected = ` AND NOT EXISTS (SELECT 1 FROM memory_runs AS r WHERE r.tenant_id = m.tenant_id AND r.user_id = m.user_id
	AND r.message_id = m.id AND r.outcome = 'rejected')`

func scanMessageCandidate(r pgx.Row, extra ...any) (memento.RecallCandidate, error) {
	c := memento.RecallCandidate{Kind: memento.RecallMessage}
	var at int64
	var role string
	var emb []byte
	var periods *string
	dest := append([]any{&c.ID, &c.Thread, &c.Seq, &role, &c.Text, &at, &c.Embedder, &emb, &periods}, extra...)
	if err := r.Scan(dest...); err != nil {
		return c, err
	}
	c.Role, c.At, c.Vector = memento.Role(role), fromNanos(at), vectorFrom(emb)
	c.Sources = []string{c.ID}
	if err := readPeriods(&c, periods); err != nil {
		return c, fmt.Errorf("message %s: %w", c.ID, err)
	}
	return c, nil
}

// MessageCandidates returns the user's messages for recall: the q.Keyword
// best BM25 matches of q.Query, the messages up to q.Neighbors positions
// around each of the q.NeighborHits best, and the q.Recent most recent,
// each once, with their embeddings, leaving out q.ExcludeThread and the
// messages the pipeline rejected. It reads one snapshot. Errors: EINVALID.
func (db *DB) MessageCandidates(ctx context.Context, s memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	var out []memento.RecallCandidate
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		out = []memento.RecallCandidate{}
		seen := map[string]bool{}
		add := func(rows pgx.Rows, ranked, neighbor bool) error {
			defer rows.Close()
			for rows.Next() {
				var score float64
				var c memento.RecallCandidate
				var err error
				if ranked {
					c, err = scanMessageCandidate(rows, &score)
				} else {
					c, err = scanMessageCandidate(rows)
				}
				if err != nil {
					return err
				}
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
				c.BM25, c.Neighbor = score, neighbor
				out = append(out, c)
			}
			return rows.Err()
		}
		var kq *keywordQuery
		if q.Keyword > 0 {
			if kq, err = prepareKeywords(ctx, tx, "message", s, q.Query); err != nil {
				return err
			}
		}
		var threads []string
		var seqs []int64
		if kq != nil {
			limit := q.Keyword
			if q.ExcludeThread != "" {
				limit *= 2
			}
			for _, p := range periods(q) {
				args, next := rankArgs(s, kq, limit, p)
				args = append(args, q.ExcludeThread, q.Keyword)
				rows, err := tx.Query(ctx, `SELECT `+messageCandidateColumns+`, top.score FROM (`+rankSQL("message", "messages", "at", p != allTime)+`) AS top
					JOIN messages AS m ON m.pk = top.pk LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
					WHERE m.thread_id <> $`+fmt.Sprint(next)+`
					ORDER BY top.score DESC, m.pk LIMIT $`+fmt.Sprint(next+1), args...)
				if err != nil {
					return err
				}
				if err := add(rows, true, false); err != nil {
					return err
				}
			}
			if q.Neighbors > 0 {
				hits := out
				if q.NeighborHits > 0 && len(hits) > q.NeighborHits {
					hits = hits[:q.NeighborHits]
				}
				for _, c := range hits {
					for d := int64(-q.Neighbors); d <= int64(q.Neighbors); d++ {
						if d != 0 && c.Seq+d > 0 {
							threads, seqs = append(threads, c.Thread), append(seqs, c.Seq+d)
						}
					}
				}
			}
		}
		if len(seqs) > 0 {
			rows, err := tx.Query(ctx, `SELECT `+messageCandidateColumns+`
				FROM unnest($3::text[], $4::bigint[]) WITH ORDINALITY AS j(thread, seq, n)
				JOIN messages AS m ON m.tenant_id = $1 AND m.user_id = $2 AND m.thread_id = j.thread AND m.seq = j.seq
				LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
				WHERE TRUE`+notRejected+` ORDER BY j.n`, s.Tenant, s.User, threads, seqs)
			if err != nil {
				return err
			}
			if err := add(rows, false, true); err != nil {
				return err
			}
		}
		if q.Recent > 0 {
			rows, err := tx.Query(ctx, `SELECT `+messageCandidateColumns+` FROM messages AS m
				LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
				WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.thread_id <> $3`+notRejected+`
				ORDER BY m.at DESC, m.pk DESC LIMIT $4`, s.Tenant, s.User, q.ExcludeThread, q.Recent)
			if err != nil {
				return err
			}
			if err := add(rows, false, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("message candidates: %w", err)
	}
	return out, nil
}
