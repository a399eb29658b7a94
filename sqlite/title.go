package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// PutTitles inserts or updates titles, in one transaction; with replace,
// every other title is removed first. It returns how many titles were
// written. Errors: EINVALID for a title without an id or a name.
func (db *DB) PutTitles(ctx context.Context, titles []memento.Title, replace bool) (int, error) {
	for i, t := range titles {
		if t.ID == "" {
			return 0, memento.Errorf(memento.EINVALID, "titles[%d].id is required", i)
		}
		if strings.TrimSpace(t.Title) == "" {
			return 0, memento.Errorf(memento.EINVALID, "titles[%d].title is required", i)
		}
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		if replace {
			if _, err := tx.ExecContext(ctx, `DELETE FROM titles`); err != nil {
				return fmt.Errorf("clear titles: %w", err)
			}
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO titles
			(id, title, type, year, end_year, genres, cast_members, overview, runtime_minutes, is_adult, href, notability)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET title = excluded.title, type = excluded.type, year = excluded.year,
				end_year = excluded.end_year, genres = excluded.genres, cast_members = excluded.cast_members,
				overview = excluded.overview, runtime_minutes = excluded.runtime_minutes,
				is_adult = excluded.is_adult, href = excluded.href, notability = excluded.notability`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, t := range titles {
			genres, err := jsonList(t.Genres)
			if err != nil {
				return err
			}
			cast, err := jsonList(t.Cast)
			if err != nil {
				return err
			}
			if _, err := stmt.ExecContext(ctx, t.ID, t.Title, t.Type, t.Year, t.EndYear, genres, cast,
				t.Overview, t.RuntimeMinutes, t.IsAdult, t.Href, min(max(t.Notability, 0), 1)); err != nil {
				return fmt.Errorf("put title %s: %w", t.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("put titles: %w", err)
	}
	return len(titles), nil
}

// jsonList encodes a list of strings, nil as [].
func jsonList(l []string) (string, error) {
	if l == nil {
		return "[]", nil
	}
	b, err := json.Marshal(l)
	return string(b), err
}

// Titles returns every stored title, ordered by id.
func (db *DB) Titles(ctx context.Context) ([]memento.Title, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, title, type, year, end_year, genres, cast_members,
		overview, runtime_minutes, is_adult, href, notability FROM titles ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list titles: %w", err)
	}
	defer rows.Close()
	titles := []memento.Title{}
	for rows.Next() {
		var t memento.Title
		var genres, cast string
		if err := rows.Scan(&t.ID, &t.Title, &t.Type, &t.Year, &t.EndYear, &genres, &cast,
			&t.Overview, &t.RuntimeMinutes, &t.IsAdult, &t.Href, &t.Notability); err != nil {
			return nil, fmt.Errorf("list titles: %w", err)
		}
		if err := json.Unmarshal([]byte(genres), &t.Genres); err != nil {
			return nil, fmt.Errorf("decode genres of title %s: %w", t.ID, err)
		}
		if err := json.Unmarshal([]byte(cast), &t.Cast); err != nil {
			return nil, fmt.Errorf("decode cast of title %s: %w", t.ID, err)
		}
		titles = append(titles, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list titles: %w", err)
	}
	return titles, nil
}

// CountTitles counts the stored titles.
func (db *DB) CountTitles(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM titles`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count titles: %w", err)
	}
	return n, nil
}
