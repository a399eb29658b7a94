// Package prefs is the preference memory (DESIGN.md 2.5): the long-term
// memory of what a user likes and dislikes, stored as normalised concepts
// ("strawberries", not "I don't like strawberries") with an embedding and a
// signed weight, so that positive and negative evidence about one concept
// land in the same region of vector space. It learns preferences from
// messages and events, lets them decay, groups them into described
// clusters, and uses them to recall memories for prompts and to rank
// catalog titles.
//
// Data flows through it like this:
//
//	user message --JobPreferences, in the user's backlog--> a batch's
//	    Service.LearnMessages (or, for a job that failed there, HandleMessage)
//	    --PreferenceExtractor--> signed concepts ("heist" +1.0, "horror" -1.0)
//	event (liked, disliked, rated, abandoned) --JobPreferencesFromEvents-->
//	    Service.HandleEvent --FromEvent--> the title's genres, plot and cast
//	concepts --Embedder (each concept alone)--> unit vectors (vector.go)
//	    --Config.Merge, inside the store's write transaction (merge.go)-->
//	    new memories, or reinforced ones (similarity >= MergeThreshold),
//	    at most once per message or event id; a batch's messages in order,
//	    in one transaction (WritePreferenceBatch)
//	any change --store--> one pending JobPreferenceClusters job per user
//	    --Service.Recluster--> DBSCAN over the live vectors (dbscan.go)
//	    --ClusterDescriber--> directional description and stances,
//	    Confidence and Strength (cluster.go)
//	stored weight, kind, last reinforcement, now
//	    --DecayConfig.Effective--> effective weight (decay.go), and
//	    --DecayConfig.Faded------> whether to leave the memory out
//	live memories + query --Recaller--> memento.RecallItems for prompts
//	live memories + titles --Scorer (TitleSpace, lexical.go, kernel.go)--> agent.Signals
//
// Decay is exponential with a half-life per kind (tastes fade in months,
// facts in years) and counts from the last reinforcement, with the clock
// passed in; it never deletes anything: faded memories stay listed and can
// be reinforced. DBSCAN finds groups of related memories without a preset
// number of clusters; it is exact (the same labels as the textbook
// algorithm, which is kept as NaiveDBSCAN) and prunes most pairs of points
// with bounds, so that ten thousand clustered 256-dimensional vectors take
// well under a second on two cores, where the textbook algorithm takes
// about ten.
//
// Ranking adds, for each title, effective weight × similarity over the
// user's live preferences (so disliked concepts subtract), in a whitened
// space of title vectors computed once per embedder (titles.go), plus a
// bonus when the title's text names a concept (lexical.go); the sum folds
// into one taste vector per user, cached until the preferences change, so
// ranking the whole catalog costs one dot product per title, over the
// catalog's vectors laid out in one matrix and computed with vector
// instructions where the processor has them (kernel.go).
//
// The mathematics (vector.go, decay.go, dbscan.go, merge.go, cluster.go) is
// pure computation on values: no storage, no clock of its own, no network.
// Service, Recaller and Scorer compose it with a memento.PreferenceService
// store, a language model and an embedder passed in as fields.
package prefs
