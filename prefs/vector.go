package prefs

import "math"

// Dot returns the dot product of a and b, accumulated in float32 over four
// independent sums (which lets the processor overlap them; the result can
// differ from a strictly sequential sum in the last bits). Vectors of
// different lengths come from different embedders and are never compared:
// Dot returns 0 for them.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Norm returns the Euclidean length of v, computed in float64.
func Norm(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return float32(math.Sqrt(s))
}

// Normalize returns a copy of v scaled to unit length. A zero vector (or one
// that is not finite) has no direction and is returned as a copy unchanged.
func Normalize(v []float32) []float32 {
	out := make([]float32, len(v))
	n := float64(Norm(v))
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		copy(out, v)
		return out
	}
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// Cosine returns the cosine similarity of a and b, in [-1, 1]. It is 0 when
// either vector is zero or their lengths differ.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	na, nb := Norm(a), Norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	c := Dot(a, b) / (na * nb)
	return max(-1, min(1, c))
}

// CosineDistance returns 1 - Dot(a, b): the cosine distance of two unit
// vectors, in [0, 2]. Embedders return unit vectors, so this avoids
// computing norms; for other vectors use 1 - Cosine(a, b).
func CosineDistance(a, b []float32) float32 {
	return 1 - Dot(a, b)
}
