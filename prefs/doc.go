// Package prefs holds the mathematics of preference vectors: the long-term
// memory of what a user likes and dislikes, stored as normalised concepts
// ("strawberries", not "I don't like strawberries") with an embedding and a
// signed weight, so that positive and negative evidence about one concept
// land in the same region of vector space.
//
// Data flows through it like this:
//
//	concept text --Embedder--> unit vector (vector.go: Dot, Cosine, Normalize)
//	stored weight, kind, last reinforcement, now
//	    --DecayConfig.Effective--> effective weight (decay.go), and
//	    --DecayConfig.Faded------> whether to leave the memory out
//	vectors of a user's live memories
//	    --DBSCAN--> cluster labels (dbscan.go), which the cluster describer
//	                turns into directional descriptions
//
// Decay is exponential with a half-life per kind (tastes fade in months,
// facts in years) and counts from the last reinforcement, with the clock
// passed in. DBSCAN finds groups of related memories without a preset number
// of clusters; it is exact (the same labels as the textbook algorithm, which
// is kept as NaiveDBSCAN) and prunes most pairs of points with bounds, so
// that ten thousand clustered 256-dimensional vectors take well under a
// second on two cores, where the textbook algorithm takes about ten.
//
// The mathematics (vector.go, decay.go, dbscan.go) is pure computation on
// values: no storage, no clock of its own, no network.
package prefs
