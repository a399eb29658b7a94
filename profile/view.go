package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/memento-ai/memento"
)

// View is a profile decoded for ranking: the keys ranking reads, whoever
// set them. A key that is absent, or that a user set to a value of another
// shape, is left empty.
type View struct {
	PreferredGenres []GenreWeight
	DislikedGenres  []GenreWeight
	Era             *Era
	FavouritePeople []PersonWeight
	Watchlist       []string
	Seen            []string
	LikedTitles     []TitleWeight
	DislikedTitles  []TitleWeight
	AbandonRate     *float64
	Rewatcher       *bool
	Skipped         []string
}

// Decode reads the keys ranking uses from a profile. Values that do not
// have their key's shape are skipped (CheckValue keeps users from storing
// them through the API).
func Decode(p *memento.Profile) *View {
	v := &View{}
	if p == nil {
		return v
	}
	read := func(key string, dst any) {
		if e, ok := p.Keys[key]; ok {
			_ = decodeStrict(e.Value, dst)
		}
	}
	read(KeyPreferredGenres, &v.PreferredGenres)
	read(KeyDislikedGenres, &v.DislikedGenres)
	read(KeyEra, &v.Era)
	read(KeyFavouritePeople, &v.FavouritePeople)
	read(KeyWatchlist, &v.Watchlist)
	read(KeySeen, &v.Seen)
	read(KeyLikedTitles, &v.LikedTitles)
	read(KeyDislikedTitles, &v.DislikedTitles)
	read(KeyAbandonRate, &v.AbandonRate)
	read(KeyRewatcher, &v.Rewatcher)
	read(KeySkipped, &v.Skipped)
	return v
}

// decodeStrict decodes JSON refusing unknown fields and trailing data.
func decodeStrict(b []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the value")
	}
	return nil
}

// CheckValue validates a value a user sets for a profile key: the keys the
// learners write must keep their documented shape, so that ranking can
// read them; any other key may hold any JSON value. Errors: EINVALID,
// naming the key.
func CheckValue(key string, value json.RawMessage) error {
	bad := func(want string, err error) error {
		if err != nil {
			return memento.Errorf(memento.EINVALID, "profile key %s must be %s: %v", key, want, err)
		}
		return memento.Errorf(memento.EINVALID, "profile key %s must be %s", key, want)
	}
	weight := func(w float64) bool { return w >= 0 && w <= 1 && !math.IsNaN(w) }
	switch key {
	case KeyPreferredGenres, KeyDislikedGenres:
		const want = `a list of {"genre": name, "weight": 0 to 1}`
		var v []GenreWeight
		if err := decodeStrict(value, &v); err != nil {
			return bad(want, err)
		}
		for _, g := range v {
			if g.Genre == "" || !weight(g.Weight) {
				return bad(want, nil)
			}
		}
	case KeyFavouritePeople:
		const want = `a list of {"name": person, "weight": 0 to 1}`
		var v []PersonWeight
		if err := decodeStrict(value, &v); err != nil {
			return bad(want, err)
		}
		for _, p := range v {
			if p.Name == "" || !weight(p.Weight) {
				return bad(want, nil)
			}
		}
	case KeyLikedTitles, KeyDislikedTitles:
		const want = `a list of {"id": title id, "weight": 0 to 1}`
		var v []TitleWeight
		if err := decodeStrict(value, &v); err != nil {
			return bad(want, err)
		}
		for _, t := range v {
			if t.ID == "" || !weight(t.Weight) {
				return bad(want, nil)
			}
		}
	case KeyEra:
		const want = `{"from": year, "to": year, "median": year} with from <= median <= to`
		var v Era
		if err := decodeStrict(value, &v); err != nil {
			return bad(want, err)
		}
		if v.From < memento.MinYear || v.To > memento.MaxYear || v.From > v.To || v.Median < v.From || v.Median > v.To {
			return bad(want, nil)
		}
	case KeyWatchlist, KeySeen, KeySkipped:
		const want = "a list of title ids"
		var v []string
		if err := decodeStrict(value, &v); err != nil {
			return bad(want, err)
		}
		for _, id := range v {
			if id == "" {
				return bad(want, nil)
			}
		}
	case KeyAbandonRate:
		const want = "a number from 0 to 1"
		var v float64
		if err := decodeStrict(value, &v); err != nil {
			return bad(want, err)
		}
		if !weight(v) {
			return bad(want, nil)
		}
	case KeyRewatcher:
		var v bool
		if err := decodeStrict(value, &v); err != nil {
			return bad("true or false", err)
		}
	default:
		if !json.Valid(value) {
			return memento.Errorf(memento.EINVALID, "profile key %s: value is not valid JSON", key)
		}
	}
	return nil
}
