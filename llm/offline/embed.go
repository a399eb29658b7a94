package offline

import (
	"context"
	"fmt"
	"math"

	"github.com/memento-ai/memento"
)

// DefaultDim is the embedder's dimension unless another is asked for.
const DefaultDim = 256

// Feature weights of the embedder. Domain concepts weigh most so that
// "sci-fi" and "science fiction" (which share no word) land close; words
// come next; character n-grams catch spelling variants and inflections.
const (
	conceptWeight = 3.0
	wordWeight    = 1.0
	bigramWeight  = 0.7
	charWeight    = 0.6 // the norm of one word's character n-grams together
)

// Embedder is the offline embedder: signed feature hashing of word
// unigrams and bigrams, character 3- to 5-grams and domain concepts (genre
// synonyms, title types) into Dim buckets, L2-normalised. It is
// deterministic and stateless, so one Embedder is safe for concurrent use.
type Embedder struct {
	dim int
}

// NewEmbedder returns an embedder of dim dimensions; dim <= 0 means
// DefaultDim.
func NewEmbedder(dim int) *Embedder {
	if dim <= 0 {
		dim = DefaultDim
	}
	return &Embedder{dim: dim}
}

// ID names the embedder, its version and dimension, so vectors of another
// embedder or dimension are never compared with these. Bump the version
// when features or weights change.
func (e *Embedder) ID() string { return fmt.Sprintf("offline-hash/v1/%d", e.dim) }

// Dim is the length of every vector.
func (e *Embedder) Dim() int { return e.dim }

// Embed returns one unit-length vector per text. An empty text gets a
// fixed unit vector of its own.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, memento.WrapError(memento.EUNAVAILABLE, err, "Embedding was cancelled.")
	}
	out := make([][]float32, len(texts))
	buf := make([]float64, e.dim)
	for i, t := range texts {
		out[i] = e.vector(t, buf)
	}
	return out, nil
}

// typeConcepts give title-type words a shared feature.
var typeConcepts = map[string]string{
	"movie": "movie", "movies": "movie", "film": "movie", "films": "movie", "flick": "movie",
	"flicks": "movie", "cinema": "movie", "show": "series", "shows": "series", "series": "series",
	"tv": "series", "sitcom": "series", "sitcoms": "series", "episodes": "series", "miniseries": "series",
}

// vector embeds one text, using buf as scratch space.
func (e *Embedder) vector(text string, buf []float64) []float32 {
	clear(buf)
	toks := tokenize(text)
	for i := 0; i < len(toks); {
		gs, n, ok := fullGenreTable.match(toks, i)
		if !ok {
			i++
			continue
		}
		for _, g := range gs {
			e.add(buf, 'g', g, conceptWeight/math.Sqrt(float64(len(gs))))
		}
		i += n
	}
	prev := ""
	for i, t := range toks {
		if c, ok := typeConcepts[t.w]; ok {
			e.add(buf, 't', c, wordWeight)
		}
		// Version 1's words are lower-cased, not folded, and its stop
		// words and stems are its own (embedStopwords, embedStem).
		w := t.w
		if !isASCII(t.raw) {
			w = lowerWord(t.raw)
		}
		if embedStopwords[w] {
			prev = ""
			continue
		}
		st := embedStem(w)
		e.add(buf, 'w', st, wordWeight)
		if prev != "" && t.brk == 0 && i > 0 {
			e.add(buf, 'b', prev+" "+st, bigramWeight)
		}
		prev = st
		e.addGrams(buf, w)
	}
	var norm float64
	for _, v := range buf {
		norm += v * v
	}
	if norm == 0 {
		e.add(buf, 'z', "empty", 1)
		norm = 1
	}
	norm = math.Sqrt(norm)
	out := make([]float32, e.dim)
	for i, v := range buf {
		out[i] = float32(v / norm)
	}
	return out
}

// addGrams adds the character 3- to 5-grams of a word padded with '<' and
// '>', weighted so that the word's grams together have norm charWeight.
func (e *Embedder) addGrams(buf []float64, w string) {
	padded := "<" + w + ">"
	count := 0
	for n := 3; n <= 5; n++ {
		if len(padded) >= n {
			count += len(padded) - n + 1
		}
	}
	if count == 0 {
		return
	}
	weight := charWeight / math.Sqrt(float64(count))
	for n := 3; n <= 5; n++ {
		for i := 0; i+n <= len(padded); i++ {
			e.add(buf, 'c', padded[i:i+n], weight)
		}
	}
}

// add hashes a feature (kind and text) with FNV-1a into a bucket; the top
// bit of the hash gives its sign, so collisions cancel out on average.
func (e *Embedder) add(buf []float64, kind byte, feature string, weight float64) {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	h ^= uint64(kind)
	h *= prime
	for i := 0; i < len(feature); i++ {
		h ^= uint64(feature[i])
		h *= prime
	}
	idx := int(h % uint64(e.dim))
	if h>>63 == 1 {
		weight = -weight
	}
	buf[idx] += weight
}
