// Package profile is the key-value memory Memento learns from what users
// do (DESIGN.md 2.4): typed events go in, deterministic learners turn them
// into profile keys, and ranking reads the profile in code. No language
// model is involved.
//
// # How data flows
//
//	POST /v1/users/{u}/events, `memento events import`, or a user message
//	("I watched Heat and loved it", MessageEvents in a message-events job, read by the language model;
//	 a batch of the user's backlog reads its messages' together, Worker.LearnMessages)
//	  --CheckEvents, EventService.AddEvents (+ EventJobs: in the same transaction)-->
//	events table --profile job: Judge, Learners, ProfileService.SaveLearned--> profile keys
//	events of every user --profile-model job: ModelBuilder--> co-occurrence model
//	  (jobs coalesced: at most one recompute every Worker.ModelEvery)
//	profile + model --Scorer (agent.Scorer) / Ranker--> ranked titles with "why"
//
// Judge folds a user's events into one Judgement per title, resolving
// conflicts by recency: the newest explicit opinion (liked, disliked,
// rated) is the user's opinion, so "liked then disliked" is disliked.
// Learners read judgements and write keys, each with the ids of the events
// that support it. The default keys and their JSON values:
//
//	preferredGenres  [{"genre","weight"}]  genres liked on balance, weight in (0,1]
//	dislikedGenres   [{"genre","weight"}]  genres disliked on balance
//	era              {"from","to","median"} 10th-90th percentile of liked years
//	favouritePeople  [{"name","weight"}]   cast of two or more liked titles
//	watchlist        ["title id", ...]     watchlisted and not seen since
//	seen             ["title id", ...]     never recommended again unless asked
//	likedTitles      [{"id","weight"}]     in the order the opinions were formed
//	dislikedTitles   [{"id","weight"}]
//	skipped          ["title id", ...]     skipped and not seen
//	abandonRate      0.25                  share of started titles abandoned
//	rewatcher        true                  watches titles again
//
// A user may set any key (PUT/PATCH /v1/users/{u}/profile); a key set by
// the user is marked "source":"user" and learners never overwrite it.
// CheckValue keeps the keys above in their shape so ranking can read them.
//
// # Ranking
//
// A Ranker scores a title from the profile alone plus the tenant's
// co-occurrence model, with the documented Weights: the collaborative
// signal (people who liked what you liked, recent likes counting more,
// scaled so the user's best title scores 1), genre affinity, favourite
// people, era, a popularity prior, the watchlist boost and a penalty for
// skipped titles; seen titles are dropped. Every signal that moved a title
// adds a reason to its "why". The agent uses it through Scorer;
// `memento eval movielens` uses the same Scorer through agent.Rank.
//
// The co-occurrence model is "people who liked X also liked Y", learned
// over every user's events (ModelBuilder): titles liked close together in
// a user's history count together more, similarities lean towards "of
// those who liked X, how many liked Y", and each title keeps its hundred
// best neighbours. It is recomputed in the background after events arrive
// (one at a time, skipped when nothing new was stored) and stored in
// binary form (Model.MarshalBinary); StoreModels decodes it once per
// version for ranking.
package profile
