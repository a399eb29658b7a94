package prefs

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
)

// Bucket thresholds of Strength.
const (
	// StrongConfidence is the confidence from which an undivided cluster
	// is strong.
	StrongConfidence = 0.6
	// MixedShare is the share of a cluster's weight that must oppose its
	// direction for the cluster to be mixed.
	MixedShare = 0.25
)

// Group clusters preferences with DBSCAN over their vectors (cosine
// distance, c.Eps and c.MinPts) and returns the indices of each cluster's
// members, clusters in the order DBSCAN numbers them. Preferences in no
// cluster are left out. The caller passes the memories to cluster: those of
// one embedder that have not faded.
func (c Config) Group(prefs []memento.Preference) [][]int {
	c = c.withDefaults()
	vectors := make([][]float32, len(prefs))
	for i, p := range prefs {
		vectors[i] = p.Vector
	}
	return groupsOf(DBSCAN(vectors, c.Eps, c.MinPts))
}

// groupsOf turns DBSCAN's labels into the indices of each cluster's
// members, leaving noise out.
func groupsOf(labels []int) [][]int {
	var groups [][]int
	for i, l := range labels {
		if l == Noise {
			continue
		}
		for len(groups) <= l {
			groups = append(groups, nil)
		}
		groups[l] = append(groups[l], i)
	}
	return groups
}

// Confidence returns how sure a cluster is, in [0, 1), from its members'
// effective weights and evidence: (1 - e^(-Σ|w|/1.5)) × (1 - e^(-Σevidence/3)).
// Both factors grow with more and stronger evidence and saturate, so two
// single mild statements give about 0.3 and a handful of repeated, strong
// ones above 0.8. Faded members count with what is left of their weight.
func Confidence(members []memento.Preference) float64 {
	var mass, evidence float64
	for _, m := range members {
		mass += math.Abs(m.EffectiveWeight)
		evidence += float64(max(m.Evidence, 1))
	}
	if len(members) == 0 {
		return 0
	}
	c := (1 - math.Exp(-mass/1.5)) * (1 - math.Exp(-evidence/3))
	return math.Round(c*1000) / 1000
}

// Strength buckets a cluster for prompts: mixed when at least MixedShare of
// its members' weight opposes its direction (the evidence pulls both ways),
// otherwise strong from StrongConfidence on and mild below it.
func Strength(c memento.PreferenceCluster, weights map[string]float64) string {
	var total, opposed float64
	for _, m := range c.Members {
		w := math.Abs(weights[m.Preference])
		total += w
		if m.Stance == memento.StanceOppose {
			opposed += w
		}
	}
	switch {
	case total > 0 && opposed/total >= MixedShare:
		return memento.StrengthMixed
	case c.Confidence >= StrongConfidence:
		return memento.StrengthStrong
	}
	return memento.StrengthMild
}

// ClusterID names a cluster after its oldest member, so the id survives
// reclustering while that memory stays in it.
func ClusterID(members []memento.Preference) string {
	if len(members) == 0 {
		return ""
	}
	oldest := slices.MinFunc(members, func(a, b memento.Preference) int {
		return cmp.Or(a.FirstSeen.Compare(b.FirstSeen), strings.Compare(a.ID, b.ID))
	})
	return "pcl_" + strings.TrimPrefix(oldest.ID, "pref_")
}

// Signature names a cluster's members, their concepts and the signs of their
// weights; a cluster with the same signature as a described one keeps its
// description.
func Signature(members []memento.Preference) string {
	parts := make([]string, len(members))
	for i, m := range members {
		sign := "+"
		if m.EffectiveWeight < 0 {
			sign = "-"
		}
		parts[i] = m.ID + "\x00" + m.Concept + "\x00" + sign
	}
	slices.Sort(parts)
	h := sha256.Sum256([]byte(strings.Join(parts, "\x01")))
	return hex.EncodeToString(h[:12])
}

// signStances are the stances by the sign of each member's weight, for a
// describer that returns none it can be trusted with.
func signStances(members []memento.Preference) []string {
	out := make([]string, len(members))
	for i, m := range members {
		out[i] = memento.StanceSupport
		if m.EffectiveWeight < 0 {
			out[i] = memento.StanceOppose
		}
	}
	return out
}

// describeBySign is the fallback description when the describer returns an
// empty one: "prefers a and b; dislikes c".
func describeBySign(members []memento.Preference) string {
	var likes, dislikes []string
	for _, m := range members {
		if m.EffectiveWeight < 0 {
			dislikes = append(dislikes, m.Concept)
		} else {
			likes = append(likes, m.Concept)
		}
	}
	var parts []string
	if len(likes) > 0 {
		parts = append(parts, "prefers "+strings.Join(likes, ", "))
	}
	if len(dislikes) > 0 {
		parts = append(parts, "dislikes "+strings.Join(dislikes, ", "))
	}
	return strings.Join(parts, "; ")
}

// Centroid returns the normalised sum of the members' vectors, the
// direction a cluster stands for.
func Centroid(members []memento.Preference) []float32 {
	if len(members) == 0 {
		return nil
	}
	sum := make([]float32, len(members[0].Vector))
	for _, m := range members {
		if len(m.Vector) != len(sum) {
			continue
		}
		for d, x := range m.Vector {
			sum[d] += x
		}
	}
	return Normalize(sum)
}
