package prefs

import (
	"math"
	"math/rand/v2"
)

// clustered returns n unit vectors of dim dimensions: around centres random
// cluster centres, each point is its centre plus gaussian noise of standard
// deviation sigma per dimension, normalised; a share noise of the points
// are uniformly random directions instead. With dim 256 and sigma 0.04 two
// points of one cluster have a cosine similarity near 0.7, like related
// concepts of hashed n-gram embeddings; points of different clusters are
// nearly orthogonal.
func clustered(seed uint64, n, dim, centres int, sigma, noise float64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	randomUnit := func() []float32 {
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(r.NormFloat64())
		}
		return Normalize(v)
	}
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = randomUnit()
	}
	out := make([][]float32, n)
	for i := range out {
		if r.Float64() < noise || centres == 0 {
			out[i] = randomUnit()
			continue
		}
		c := cs[r.IntN(centres)]
		v := make([]float32, dim)
		for d := range v {
			v[d] = c[d] + float32(sigma*r.NormFloat64())
		}
		out[i] = Normalize(v)
	}
	return out
}

// angles returns 2-dimensional unit vectors at the given angles in degrees,
// which makes hand-computed distances easy: two of them are within eps when
// their angles differ by at most acos(1 - eps).
func angles(degrees ...float64) [][]float32 {
	out := make([][]float32, len(degrees))
	for i, a := range degrees {
		rad := a * math.Pi / 180
		out[i] = []float32{float32(math.Cos(rad)), float32(math.Sin(rad))}
	}
	return out
}

// epsForAngle returns the cosine distance of two unit vectors degrees apart.
func epsForAngle(degrees float64) float32 {
	return float32(1 - math.Cos(degrees*math.Pi/180))
}
