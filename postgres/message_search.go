package postgres

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// DefaultSearchLimit is how many messages SearchMessages returns when asked
// for zero, as in package sqlite.
const DefaultSearchLimit = 10

// MessageHit is a message that matched a keyword search, with its BM25
// relevance: sqlite.MessageHit's twin, kept apart because only tests and
// tools use it and the root package has no search of the message log.
type MessageHit struct {
	Message memento.Message `json:"message"`
	// Score is the BM25 relevance of the message to the query; higher is
	// more relevant, and always positive.
	Score float64 `json:"score"`
}

// SearchMessages ranks the user's messages (across all their threads) by
// BM25 against the words of query and returns the best k (0:
// DefaultSearchLimit), most relevant first, newer first among equals. The
// query is plain text: its words are matched with OR, after the stemming
// the index applies, so "liked thrillers" finds "I like thrillers"; a
// query without words matches nothing.
//
// It ranks over the keyword index recall uses (search.go), as SQLite's
// does (the lengths of documents count recall's scope token there too),
// but a message the pipeline rejected as an instruction to the system is
// not found. Unlike recall,
// it does not bound the matches per word. Errors: EINVALID.
func (db *DB) SearchMessages(ctx context.Context, s memento.Scope, query string, k int) ([]MessageHit, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if k < 0 {
		return nil, memento.Errorf(memento.EINVALID, "k must not be negative, got %d", k)
	}
	if k == 0 {
		k = DefaultSearchLimit
	}
	var terms []string
	seen := map[string]bool{}
	for _, t := range fulltext.Tokens(query) {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	hits := []MessageHit{}
	if len(terms) == 0 {
		return hits, nil
	}
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		hits = hits[:0]
		idfs, avgLen, err := corpusIDFs(ctx, tx, "message", terms)
		if err != nil || avgLen == 0 {
			return err
		}
		rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT `+prefixed("m.", messageColumns)+`, top.score FROM (
				SELECT t.pk, sum(q.idf * t.freq * %[1]g / (t.freq + %[2]g * (1 - %[3]g + %[3]g * t.len / $5::float8))) AS score
				FROM unnest($3::text[], $4::float8[]) AS q(term, idf)
				JOIN message_terms AS t ON t.term = q.term AND t.tenant_id = $1 AND t.user_id = $2
				GROUP BY t.pk) AS top
			JOIN messages AS m ON m.pk = top.pk
			ORDER BY top.score DESC, m.at DESC, m.pk DESC LIMIT $6`, fulltext.BM25K1+1, fulltext.BM25K1, fulltext.BM25B),
			s.Tenant, s.User, terms, idfs, avgLen, k)
		if err != nil {
			return err
		}
		found, err := collect(rows, func(r pgx.Rows) (MessageHit, error) {
			var h MessageHit
			var err error
			h.Message, err = scanMessage(r, &h.Score)
			return h, err
		})
		hits = append(hits, found...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	return hits, nil
}

// corpusIDFs returns the IDF of each term over kind's whole index (every
// user's documents, as in an FTS5 table) and the index's average document
// length, 0 when the index is empty.
func corpusIDFs(ctx context.Context, tx pgx.Tx, kind string, terms []string) ([]float64, float64, error) {
	rows, err := tx.Query(ctx, `SELECT (SELECT coalesce(sum(docs), 0) FROM term_stats AS ts WHERE ts.kind = $1 AND ts.term = w.term),
			tot.docs, tot.tokens
		FROM unnest($2::text[]) WITH ORDINALITY AS w(term, ord),
			(SELECT coalesce(sum(docs), 0) AS docs, coalesce(sum(tokens), 0) AS tokens FROM search_stats WHERE kind = $1) AS tot
		ORDER BY w.ord`, kind, terms)
	if err != nil {
		return nil, 0, fmt.Errorf("count matches: %w", err)
	}
	var avgLen float64
	idfs, err := collect(rows, func(r pgx.Rows) (float64, error) {
		var hits, docs, tokens int64
		if err := r.Scan(&hits, &docs, &tokens); err != nil {
			return 0, err
		}
		if docs <= 0 {
			return 0, nil
		}
		avgLen = float64(tokens) / float64(docs)
		idf := math.Log((float64(docs) - float64(hits) + 0.5) / (float64(hits) + 0.5))
		if idf <= 0 {
			idf = 1e-6 // as FTS5's bm25() does
		}
		return idf, nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("count matches: %w", err)
	}
	return idfs, avgLen, nil
}
