package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/memento-ai/memento"
)

// jsonTitle is one line of the catalog's JSON-lines format. It mirrors
// memento.Title but leaves out empty fields, which keeps files (and the
// embedded catalog) small.
type jsonTitle struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	Type           string   `json:"type,omitempty"`
	Year           int      `json:"year,omitempty"`
	EndYear        int      `json:"endYear,omitempty"`
	Genres         []string `json:"genres,omitempty"`
	Cast           []string `json:"cast,omitempty"`
	Overview       string   `json:"overview,omitempty"`
	RuntimeMinutes int      `json:"runtimeMinutes,omitempty"`
	IsAdult        bool     `json:"isAdult,omitempty"`
	Href           string   `json:"href,omitempty"`
	Notability     float64  `json:"notability,omitempty"`
}

// ReadJSONL reads the catalog's JSON-lines format, plain or gzipped: one
// JSON object per line, blank lines ignored.
//
//	{"id":"wiki:Heat_(1995_film)","title":"Heat","type":"movie","year":1995,
//	 "genres":["Crime","Thriller"],"cast":["Al Pacino","Robert De Niro"],
//	 "overview":"Heat is a 1995 American crime film ...","runtimeMinutes":170}
//
// Fields (FORMAT.md has the full description):
//
//	id              string, required: unique and stable, conventionally "source:key"
//	title           string, required
//	type            string: "movie" (the default), "tvSeries", "tvMiniSeries", "short", ...
//	year            number: release (or first-air) year, 1870-2100; absent or 0 if unknown
//	endYear         number: last year of a series, 1870-2100
//	genres          array of strings, mapped to the catalog vocabulary (see CanonicalGenre)
//	cast            array of strings: people, in billing order
//	overview        string: a short plot summary
//	runtimeMinutes  number, >= 0
//	isAdult         boolean
//	href            string: a link to the title's source page
//	notability      number, 0-1: how well known the title is (see ComputeNotability)
//
// Unknown fields are ignored. A line that is not a JSON object, lacks an id
// or a title, has a field of the wrong type or a year out of range, or
// repeats an earlier id is skipped and counted in the report.
func ReadJSONL(r io.Reader) ([]memento.Title, ImportReport, error) {
	return readLines(r, FormatJSONL, nil, func(text []byte) (memento.Title, string, string) {
		return jsonlTitle(bytes.TrimSpace(text))
	})
}

// jsonlTitle converts one JSON line, or says why it cannot.
func jsonlTitle(line []byte) (t memento.Title, reason, detail string) {
	if line[0] != '{' {
		return t, ReasonJSON, "line is not a JSON object"
	}
	var j jsonTitle
	if !decodeTitleFast(line, &j) {
		j = jsonTitle{}
		if err := json.Unmarshal(line, &j); err != nil {
			reason, detail := jsonReason(err)
			return t, reason, detail
		}
	}
	t = memento.Title{
		ID:             strings.TrimSpace(j.ID),
		Title:          collapseSpace(j.Title),
		Type:           strings.TrimSpace(j.Type),
		Year:           j.Year,
		EndYear:        j.EndYear,
		Genres:         cleanList(j.Genres, CanonicalGenre),
		Cast:           cleanList(j.Cast, nil),
		Overview:       strings.TrimSpace(j.Overview),
		RuntimeMinutes: j.RuntimeMinutes,
		IsAdult:        j.IsAdult,
		Href:           strings.TrimSpace(j.Href),
		Notability:     j.Notability,
	}
	switch {
	case t.ID == "":
		return t, ReasonID, "id is missing or blank"
	case t.Title == "":
		return t, ReasonTitle, fmt.Sprintf("%s has no title", t.ID)
	case !validYear(t.Year):
		return t, ReasonYear, fmt.Sprintf("year %d of %s is not in %d-%d", t.Year, t.ID, memento.MinYear, memento.MaxYear)
	case !validYear(t.EndYear):
		return t, ReasonYear, fmt.Sprintf("endYear %d of %s is not in %d-%d", t.EndYear, t.ID, memento.MinYear, memento.MaxYear)
	case t.RuntimeMinutes < 0:
		return t, ReasonRuntime, fmt.Sprintf("runtimeMinutes %d of %s is negative", t.RuntimeMinutes, t.ID)
	case !(t.Notability >= 0 && t.Notability <= 1):
		return t, ReasonNotability, fmt.Sprintf("notability %v of %s is not in 0-1", t.Notability, t.ID)
	}
	if t.Type == "" {
		t.Type = memento.TypeMovie
	}
	return t, "", ""
}

// WriteJSONL writes titles to w in the catalog's JSON-lines format (see
// ReadJSONL), one object per line, leaving out empty fields. ReadJSONL reads
// the output back to equal titles.
func WriteJSONL(w io.Writer, titles []memento.Title) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range titles {
		t := &titles[i]
		j := jsonTitle{ID: t.ID, Title: t.Title, Type: t.Type, Year: t.Year, EndYear: t.EndYear,
			Genres: t.Genres, Cast: t.Cast, Overview: t.Overview, RuntimeMinutes: t.RuntimeMinutes,
			IsAdult: t.IsAdult, Href: t.Href, Notability: t.Notability}
		if err := enc.Encode(&j); err != nil {
			return fmt.Errorf("write title %s: %w", t.ID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write titles: %w", err)
	}
	return nil
}

// jsonReason classifies a decoding error of a JSON line: a field of the
// wrong type is reported under that field's reason.
func jsonReason(err error) (reason, detail string) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		switch te.Field {
		case "id":
			return ReasonID, fmt.Sprintf("id is a JSON %s, want a string", te.Value)
		case "title":
			return ReasonTitle, fmt.Sprintf("title is a JSON %s, want a string", te.Value)
		case "year", "endYear":
			return ReasonYear, fmt.Sprintf("%s is a JSON %s, want a whole number", te.Field, te.Value)
		case "runtimeMinutes":
			return ReasonRuntime, fmt.Sprintf("runtimeMinutes is a JSON %s, want a whole number", te.Value)
		case "notability":
			return ReasonNotability, fmt.Sprintf("notability is a JSON %s, want a number from 0 to 1", te.Value)
		}
	}
	return ReasonJSON, err.Error()
}
