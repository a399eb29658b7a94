package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
)

// The levels of a full-text index written in bulk.
//
// FTS5 keeps an index as segments on levels. The merger's requests
// (ftsmerge.go) merge a level once it holds FTS5's usermerge (4) segments
// into one segment on the level above, so a segment's level counts the
// merges that made it, not its size. In an index grown by the service's
// writes, one small segment a transaction, a segment on level L holds
// about 4^L transactions' terms, and the largest are rewritten only after
// some 3 x 4^L more transactions: the merging costs each row a rewrite a
// level, log4 of the index's size in all.
//
// An index written in a few huge transactions is not like that. The
// bench's bulk load (Bulk) left message_search at 1.1 M memories with
// segments of 15,235 and 6,679 pages on level 3 once merged
// (MergeFullText), where an index grown to that size has its largest on
// level 7 or so. Level 3 filled again after a few hundred of the
// service's transactions, and the merger then rewrote the whole index,
// about 22,000 pages (90 MB), in some 1,400 requests; a request ends only
// between two terms, and the doclist of a word in every other message is
// megabytes, so some of them held the writer for 100 ms. Every round of
// the bench met that rewrite, at a time that decided much of its
// figures (docs/BENCHMARKS.md, twenty-fifth session).
//
// LevelFullText puts such an index where its size belongs: while the
// level of its largest segment is below log4 of its pages, it merges the
// index into one segment with FTS5's 'optimize', which writes it one
// level above the index's top level, and as the second and later times
// find one segment (which 'optimize' leaves as it is), it first adds and
// deletes a row that is no one's, so that there are two. Each time
// rewrites the index once: the bench's store at 1.1 M memories took four,
// two an index, in 4.6-5.3 s.

// ftsSegment is a segment of a full-text index: its level and pages.
type ftsSegment struct {
	level, pages int
}

// ftsStructure reads the segments of a full-text index from its
// structure record (the row of id 10 of its %_data table, in the format
// of FTS5's fts5StructureDecode, with the tombstone fields of an index
// with contentless_delete).
func ftsStructure(ctx context.Context, q execQuerier, index string) ([]ftsSegment, error) {
	var b []byte
	if err := q.QueryRowContext(ctx, `SELECT block FROM `+index+`_data WHERE id = 10`).Scan(&b); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil // an index never written
		}
		return nil, fmt.Errorf("read the structure of %s: %w", index, err)
	}
	bad := fmt.Errorf("read the structure of %s: a record of %d bytes in a format not known here", index, len(b))
	if len(b) < 4 {
		return nil, bad
	}
	i := 4 // the cookie
	v2 := len(b) >= 8 && b[4] == 0xff && b[5] == 0 && b[6] == 0 && b[7] == 1
	if v2 {
		i += 4
	}
	failed := false
	next := func() uint64 {
		v, n := ftsVarint(b[i:])
		if n == 0 {
			failed = true
			return 0
		}
		i += n
		return v
	}
	levels, total := next(), next()
	next() // the write counter
	if failed || levels > 64 || total > 1<<20 {
		return nil, bad
	}
	var segs []ftsSegment
	for l := range int(levels) {
		next() // segments being merged
		n := next()
		for range n {
			next() // the segment's id
			first, last := next(), next()
			if v2 {
				for range 5 { // origins and tombstones
					next()
				}
			}
			if failed || last+1 < first {
				return nil, bad
			}
			segs = append(segs, ftsSegment{level: l, pages: int(last - first + 1)})
		}
	}
	if failed || len(segs) != int(total) {
		return nil, bad
	}
	return segs, nil
}

// ftsVarint decodes an SQLite varint (the format FTS5 writes): up to nine
// bytes, big-endian, seven bits a byte with the high bit set on all but
// the last, and all eight bits of a ninth. It returns the value and its
// length, 0 when b ends first.
func ftsVarint(b []byte) (uint64, int) {
	var v uint64
	for i := range min(len(b), 9) {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// ftsWantLevel is the level below which the largest segment of an index
// of pages pages is rewritten more often than in an index grown by small
// transactions: log4 of its pages, rounded down.
func ftsWantLevel(pages int) int {
	if pages < 4 {
		return 0
	}
	return (bits.Len(uint(pages)) - 1) / 2
}

// ftsLow returns an index's pages, and reports whether its largest
// segment lies below the level those warrant and whether it is alone.
func ftsLow(segs []ftsSegment) (pages int, low, alone bool) {
	var largest ftsSegment
	for _, s := range segs {
		pages += s.pages
		if s.pages > largest.pages || s.pages == largest.pages && s.level > largest.level {
			largest = s
		}
	}
	return pages, len(segs) > 0 && largest.level < ftsWantLevel(pages), len(segs) == 1
}

// ftsLevelRow is the rowid of the row LevelFullText adds and deletes: no
// message's nor memory's (their keys are positive).
const ftsLevelRow = -1

// LevelFullText raises each full-text index whose largest segment lies
// below the level its size warrants, as an index written in bulk does, to
// that level (see above), and returns how many times it rewrote an index.
// Each rewrite holds the writer for the seconds it takes: run it before
// serving, after a bulk load and MergeFullText (memento bench does).
func (db *DB) LevelFullText(ctx context.Context) (int, error) {
	rewrites := 0
	for _, index := range ftsIndexes {
		// Each rewrite raises the index by a level or two; the bound
		// keeps a structure read wrongly from rewriting for ever.
		for range 64 {
			segs, err := ftsStructure(ctx, db.read, index)
			if err != nil {
				return rewrites, err
			}
			pages, low, alone := ftsLow(segs)
			if !low {
				break
			}
			if err := ctx.Err(); err != nil {
				return rewrites, err
			}
			db.logger.Info("sqlite: rewriting a full-text index written in bulk onto its level; the writer is held meanwhile",
				"index", index, "pages", pages, "level", ftsWantLevel(pages))
			db.settleWAL(ctx)
			err = db.writeTxAt(ctx, false, func(tx *sql.Tx) error {
				if alone {
					if _, err := tx.ExecContext(ctx, `INSERT INTO `+index+` (rowid, scope) VALUES (?, 'mementolevel')`, ftsLevelRow); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `DELETE FROM `+index+` WHERE rowid = ?`, ftsLevelRow); err != nil {
						return err
					}
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO `+index+` (`+index+`) VALUES ('optimize')`)
				return err
			})
			if err != nil {
				return rewrites, fmt.Errorf("level the full-text index %s: %w", index, err)
			}
			rewrites++
		}
	}
	return rewrites, nil
}
