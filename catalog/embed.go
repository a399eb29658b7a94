package catalog

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/memento-ai/memento"
)

//go:generate go run ./internal/gen -src ../../shared/data/wikimovies -out data/titles.jsonl.gz

// embeddedData is the default catalog: about 36,000 American films from
// Wikipedia's lists of American films, as gzipped JSON lines written by
// internal/gen. See NOTICE at the repository root for attribution.
//
//go:embed data/titles.jsonl.gz
var embeddedData []byte

// embedded parses and indexes embeddedData once per process. The Index it
// holds is immutable, so sharing it is safe.
var embedded = sync.OnceValues(loadEmbedded)

// Embedded returns the index of the default catalog that is built into the
// binary: about 36,000 American films from Wikipedia (title, year, genres,
// cast and a short plot extract), see NOTICE for attribution. The data is
// decompressed, parsed and indexed on the first call only; every call
// returns the same immutable Index.
func Embedded() (*Index, error) {
	return embedded()
}

// EmbeddedTitles returns a fresh copy of the default catalog's titles, in
// the order of the embedded file (year descending, then id), e.g. to write
// them out or merge them with imported ones.
func EmbeddedTitles() ([]memento.Title, error) {
	zr, err := gzip.NewReader(bytes.NewReader(embeddedData))
	if err != nil {
		return nil, fmt.Errorf("read embedded catalog: %w", err)
	}
	// The gzip trailer holds the uncompressed size (mod 4 GiB), so the
	// buffer is allocated once instead of grown and copied.
	size := 0
	if n := len(embeddedData); n >= 4 {
		size = int(binary.LittleEndian.Uint32(embeddedData[n-4:]))
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, fmt.Errorf("read embedded catalog: %w", err)
	}
	data := buf.Bytes()
	return parseJSONLParallel(data)
}

// parseJSONLParallel parses trusted JSON lines (the embedded catalog) on
// every core: the lines are cut into one chunk per core, each parsed like
// ReadJSONL does. Any line ReadJSONL would skip is an error here.
func parseJSONLParallel(data []byte) ([]memento.Title, error) {
	workers := max(1, runtime.GOMAXPROCS(0))
	chunks := make([][]byte, 0, workers)
	for rest := data; len(rest) > 0; {
		cut := len(rest)
		if want := len(data)/workers + 1; want < len(rest) {
			if nl := bytes.IndexByte(rest[want:], '\n'); nl >= 0 {
				cut = want + nl + 1
			}
		}
		chunks = append(chunks, rest[:cut])
		rest = rest[cut:]
	}
	results := make([][]memento.Title, len(chunks))
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	for i, chunk := range chunks {
		wg.Go(func() {
			titles := make([]memento.Title, 0, bytes.Count(chunk, []byte{'\n'})+1)
			for len(chunk) > 0 {
				line := chunk
				if nl := bytes.IndexByte(chunk, '\n'); nl >= 0 {
					line, chunk = chunk[:nl], chunk[nl+1:]
				} else {
					chunk = nil
				}
				if line = bytes.TrimSpace(line); len(line) == 0 {
					continue
				}
				t, reason, detail := jsonlTitle(line)
				if reason != "" {
					errs[i] = fmt.Errorf("embedded catalog: %s: %s", reason, detail)
					return
				}
				titles = append(titles, t)
			}
			results[i] = titles
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(results...), nil
}

// loadEmbedded does the work of Embedded without caching, for the benchmark.
func loadEmbedded() (*Index, error) {
	titles, err := EmbeddedTitles()
	if err != nil {
		return nil, err
	}
	return New(titles), nil
}
