package profile

import "math/bits"

// weights is one title's pair weights, by the number of the other title:
// a hash table with open addressing and linear probing over two flat
// arrays. A build walks every weight of each title it ranks again, and
// walking Go maps (and hashing into them on every update) was most of a
// model update's time: 135-225 ms for the 1.8 M weights of the bench's
// store at 1.1 M memories, where a walk of these arrays reads them in
// order.
//
// A slot holds title+1, so that 0 marks an empty slot and a new table
// needs no filling. Deletion shifts the entries after the removed one
// back, so that no slot is left marked deleted and a lookup stops at the
// first empty slot.
type weights struct {
	keys  []int32 // title+1, or 0 for an empty slot
	vals  []int64
	n     int
	shift uint8 // 32 - log2(len(keys))
}

// weightsMinSize is the number of slots of a new table (a power of two).
const weightsMinSize = 8

// Len is the number of titles with a weight.
func (w *weights) Len() int { return w.n }

// home is the slot where title k's search begins: the top bits of a
// multiplicative (Fibonacci) hash, which spreads consecutive numbers.
func (w *weights) home(k int32) int {
	return int((uint32(k) * 0x9E3779B1) >> w.shift)
}

// Add adds d to the weight of title k; a weight that reaches 0 is
// removed.
func (w *weights) Add(k int32, d int64) {
	if d == 0 {
		return
	}
	if len(w.keys) == 0 {
		w.resize(weightsMinSize)
	}
	mask := len(w.keys) - 1
	s := w.home(k)
	for ; w.keys[s] != 0; s = (s + 1) & mask {
		if w.keys[s] == k+1 {
			if v := w.vals[s] + d; v != 0 {
				w.vals[s] = v
			} else {
				w.removeAt(s)
			}
			return
		}
	}
	w.keys[s], w.vals[s] = k+1, d
	w.n++
	if 4*w.n > 3*len(w.keys) {
		w.resize(2 * len(w.keys))
	}
}

// removeAt empties slot s and moves back the entries of the run after
// it that may take its place: an entry may move back to s when s lies
// between its home and its slot.
func (w *weights) removeAt(s int) {
	mask := len(w.keys) - 1
	for j := (s + 1) & mask; w.keys[j] != 0; j = (j + 1) & mask {
		h := w.home(w.keys[j] - 1)
		if (j-h)&mask >= (j-s)&mask {
			w.keys[s], w.vals[s] = w.keys[j], w.vals[j]
			s = j
		}
	}
	w.keys[s], w.vals[s] = 0, 0
	w.n--
}

// resize moves the entries into a table of size slots, a power of two.
func (w *weights) resize(size int) {
	keys, vals := w.keys, w.vals
	w.keys, w.vals, w.n = make([]int32, size), make([]int64, size), 0
	w.shift = uint8(32 - bits.Len(uint(size)-1))
	mask := size - 1
	for i, k := range keys {
		if k == 0 {
			continue
		}
		s := w.home(k - 1)
		for w.keys[s] != 0 {
			s = (s + 1) & mask
		}
		w.keys[s], w.vals[s] = k, vals[i]
		w.n++
	}
}
