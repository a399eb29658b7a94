package sqlite

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// DefaultSearchLimit is how many messages SearchMessages returns when asked
// for zero.
const DefaultSearchLimit = 10

// MessageHit is a message that matched a keyword search, with its BM25
// relevance.
type MessageHit struct {
	Message memento.Message `json:"message"`
	// Score is the BM25 relevance of the message to the query; higher is
	// more relevant. It is SQLite's bm25() negated, so it is positive.
	Score float64 `json:"score"`
}

// SearchMessages ranks the user's messages (across all their threads) by
// BM25 against the words of query and returns the best k (0:
// DefaultSearchLimit), most relevant first, newer first among equals. The
// query is plain text, not FTS5 syntax: its words are matched with OR, after
// the same stemming the index applies, so "liked thrillers" finds "I like
// thrillers". A query without words matches nothing.
func (db *DB) SearchMessages(ctx context.Context, s memento.Scope, query string, k int) ([]MessageHit, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if k < 0 {
		return nil, memento.Errorf(memento.EINVALID, "k must not be negative, got %d", k)
	}
	if k == 0 {
		k = DefaultSearchLimit
	}
	match := ftsQuery(query)
	hits := []MessageHit{}
	if match == "" {
		return hits, nil
	}
	// The words are matched in the text column only, among the user's
	// rows (recall's scope token); the scope column weighs nothing in the
	// rank.
	rows, err := db.read.QueryContext(ctx, `SELECT `+prefixed("m.", messageColumns)+`, bm25(message_search, 1.0, 0.0) AS rank
		FROM message_search JOIN messages AS m ON m.pk = message_search.rowid
		WHERE message_search MATCH ? AND m.tenant_id = ? AND m.user_id = ?
		ORDER BY rank, m.at DESC, m.pk DESC LIMIT ?`, scopeToken(s)+" AND text : ("+match+")", s.Tenant, s.User, k)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rank float64
		m, err := scanMessage(rows, &rank)
		if err != nil {
			return nil, fmt.Errorf("search messages: %w", err)
		}
		hits = append(hits, MessageHit{Message: m, Score: -rank})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	return hits, nil
}

// ftsQuery turns plain text into an FTS5 query that ORs its words, each
// quoted so that no word is read as an operator (AND, NEAR) or a column
// filter. Words are runs of letters and digits; duplicates are dropped.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	seen := map[string]bool{}
	var terms []string
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+w+`"`)
	}
	return strings.Join(terms, " OR ")
}

// prefixed qualifies each column of a comma-separated list with prefix.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ", ")
	for i, c := range cols {
		cols[i] = prefix + c
	}
	return strings.Join(cols, ", ")
}
