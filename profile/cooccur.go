package profile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/memento-ai/memento"
)

// ModelName is the name the co-occurrence model is stored under.
const ModelName = "cooccurrence"

// ModelOptions tune the co-occurrence learner. The zero value takes the
// defaults named on each field.
type ModelOptions struct {
	// Neighbours is how many most similar titles are kept per title.
	// Default 100.
	Neighbours int
	// Window is the distance, in positions of a user's sequence of liked
	// titles, over which the weight of a pair falls by a factor e: two
	// titles liked one after the other count exp(-1/Window), ten apart
	// exp(-10/Window). Default 10.
	Window float64
	// MaxGap is the largest distance at which two titles count together.
	// Default 50.
	MaxGap int
	// Alpha shapes the similarity of a title j to a title i: the weighted
	// count of users who liked both, over users(i)^Alpha * users(j)^(1-Alpha).
	// 0.5 is the cosine; higher values lean towards "of those who liked i,
	// how many liked j", which favours well-known neighbours. Default 0.8.
	Alpha float64
}

func (o ModelOptions) withDefaults() ModelOptions {
	if o.Neighbours <= 0 {
		o.Neighbours = 100
	}
	if o.Window <= 0 {
		o.Window = 10
	}
	if o.MaxGap <= 0 {
		o.MaxGap = 50
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.8
	}
	return o
}

// Neighbour is a title similar to another, by the model's index.
type Neighbour struct {
	Title int32
	Sim   float32
}

// Model is the title co-occurrence model learned over every user's events:
// "people who liked X also liked Y", as a list of the most similar titles
// of each title, plus how many users have seen each title (popularity).
// It is immutable and safe for concurrent use.
type Model struct {
	ids      []string
	index    map[string]int32
	seen     []int32 // users who have seen each title
	nbr      [][]Neighbour
	users    int32 // users with at least one event
	maxSeen  int32
	logMaxSn float64
}

// Len is the number of titles the model knows.
func (m *Model) Len() int { return len(m.ids) }

// Users is the number of users whose events the model learned from.
func (m *Model) Users() int { return int(m.users) }

// Index returns the model's number for a title id.
func (m *Model) Index(id string) (int32, bool) {
	i, ok := m.index[id]
	return i, ok
}

// ID returns the title id of a model number.
func (m *Model) ID(i int32) string { return m.ids[i] }

// Neighbours returns the titles most similar to title i, most similar
// first.
func (m *Model) Neighbours(i int32) []Neighbour { return m.nbr[i] }

// Seen returns how many users have seen the title.
func (m *Model) Seen(id string) int {
	if i, ok := m.index[id]; ok {
		return int(m.seen[i])
	}
	return 0
}

// Popularity returns log(1+seen)/log(1+most seen), in [0, 1]: a prior that
// tells a well-known title from an obscure one without letting the few
// blockbusters dominate.
func (m *Model) Popularity(id string) float64 {
	i, ok := m.index[id]
	if !ok {
		return 0
	}
	return m.popularityAt(i)
}

func (m *Model) popularityAt(i int32) float64 {
	if m.logMaxSn == 0 {
		return 0
	}
	return math.Log1p(float64(m.seen[i])) / m.logMaxSn
}

// ModelBuilder learns a Model from users' events, one user at a time: a
// full rebuild over Counts.
type ModelBuilder struct {
	counts *Counts
	n      int
}

// NewModelBuilder returns a builder with the given options.
func NewModelBuilder(opts ModelOptions) *ModelBuilder {
	return &ModelBuilder{counts: NewCounts(opts)}
}

// Add learns from one user's events. The user's liked titles (positive
// sentiment, see Judgement) form a sequence in the order the opinions were
// formed; titles close in that sequence count together. Every title the
// user has seen counts once towards its popularity.
func (b *ModelBuilder) Add(events []memento.Event) {
	b.n++
	b.counts.Set(strconv.Itoa(b.n), events)
}

// Build computes the model (Counts.Build).
func (b *ModelBuilder) Build() *Model { return b.counts.Build() }

// modelMagic starts every encoded model; the digit is the format version.
var modelMagic = []byte("MCO1")

// MarshalBinary encodes the model compactly: the magic "MCO1", the
// number of titles and users, each title's id and seen count, then each
// title's neighbours as (number, similarity as float32) pairs, with
// unsigned varints for the integers.
func (m *Model) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.Write(modelMagic)
	b.Write(binary.AppendUvarint(nil, uint64(len(m.ids))))
	b.Write(binary.AppendUvarint(nil, uint64(m.users)))
	var buf []byte
	for i, id := range m.ids {
		buf = binary.AppendUvarint(buf[:0], uint64(len(id)))
		buf = append(buf, id...)
		buf = binary.AppendUvarint(buf, uint64(m.seen[i]))
		b.Write(buf)
	}
	for _, list := range m.nbr {
		buf = binary.AppendUvarint(buf[:0], uint64(len(list)))
		for _, nb := range list {
			buf = binary.AppendUvarint(buf, uint64(nb.Title))
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(nb.Sim))
		}
		b.Write(buf)
	}
	return b.Bytes(), nil
}

// RestoredMark is the events mark of a model restored from a snapshot: it
// was learned from events this store may not have, so a recompute keeps it
// until the local events cover as many users (Worker.RecomputeModel).
const RestoredMark = -1

// ModelUsers reads how many users an encoded model learned from, without
// decoding the rest.
func ModelUsers(data []byte) (int, error) {
	if !bytes.HasPrefix(data, modelMagic) {
		return 0, fmt.Errorf("%w: missing header", errCorrupt)
	}
	r := data[len(modelMagic):]
	_, k := binary.Uvarint(r)
	if k <= 0 {
		return 0, fmt.Errorf("%w: truncated", errCorrupt)
	}
	users, k2 := binary.Uvarint(r[k:])
	if k2 <= 0 {
		return 0, fmt.Errorf("%w: truncated", errCorrupt)
	}
	return int(users), nil
}

// errCorrupt reports a model that cannot be decoded.
var errCorrupt = errors.New("corrupt co-occurrence model")

// DecodeModel decodes a model MarshalBinary encoded.
func DecodeModel(data []byte) (*Model, error) {
	if !bytes.HasPrefix(data, modelMagic) {
		return nil, fmt.Errorf("%w: missing header", errCorrupt)
	}
	r := data[len(modelMagic):]
	uv := func() (uint64, error) {
		v, k := binary.Uvarint(r)
		if k <= 0 {
			return 0, fmt.Errorf("%w: truncated", errCorrupt)
		}
		r = r[k:]
		return v, nil
	}
	n64, err := uv()
	if err != nil {
		return nil, err
	}
	if n64 > uint64(len(r)) {
		return nil, fmt.Errorf("%w: %d titles in %d bytes", errCorrupt, n64, len(r))
	}
	users, err := uv()
	if err != nil {
		return nil, err
	}
	n := int(n64)
	m := &Model{ids: make([]string, n), index: make(map[string]int32, n), seen: make([]int32, n), nbr: make([][]Neighbour, n), users: int32(users)}
	for i := range n {
		l, err := uv()
		if err != nil {
			return nil, err
		}
		if l > uint64(len(r)) {
			return nil, fmt.Errorf("%w: title %d is cut short", errCorrupt, i)
		}
		m.ids[i] = string(r[:l])
		r = r[l:]
		m.index[m.ids[i]] = int32(i)
		s, err := uv()
		if err != nil {
			return nil, err
		}
		m.seen[i] = int32(s)
		m.maxSeen = max(m.maxSeen, m.seen[i])
	}
	for i := range n {
		k, err := uv()
		if err != nil {
			return nil, err
		}
		if k > uint64(len(r)) {
			return nil, fmt.Errorf("%w: neighbours of title %d are cut short", errCorrupt, i)
		}
		list := make([]Neighbour, k)
		for x := range list {
			t, err := uv()
			if err != nil {
				return nil, err
			}
			if t >= uint64(n) || len(r) < 4 {
				return nil, fmt.Errorf("%w: bad neighbour of title %d", errCorrupt, i)
			}
			list[x] = Neighbour{Title: int32(t), Sim: math.Float32frombits(binary.LittleEndian.Uint32(r))}
			r = r[4:]
		}
		if k > 0 {
			m.nbr[i] = list
		}
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the end", errCorrupt, len(r))
	}
	m.logMaxSn = math.Log1p(float64(m.maxSeen))
	return m, nil
}
