package memento

// Names of the language-model tasks (LanguageModel's methods, and
// Embedder's Embed), as notes, logs, metrics and `memento llm check` give
// them. A provider may name its requests otherwise on the wire.
const (
	ModelTaskUnderstand       = "understand"        // RequestUnderstander
	ModelTaskSentinel         = "sentinel"          // Sentinel
	ModelTaskExtractFacts     = "extract"           // FactExtractor
	ModelTaskReviewExtraction = "review_extraction" // ExtractionReviewer
	ModelTaskAssignAttributes = "attribute"         // Attributor
	ModelTaskMergeFact        = "merge"             // Aggregator
	ModelTaskReviewMerge      = "review_merge"      // MergeReviewer
	ModelTaskSummarise        = "summarise"         // Summariser
	ModelTaskPreferences      = "preferences"       // PreferenceExtractor
	ModelTaskDescribeCluster  = "describe_cluster"  // ClusterDescriber
	ModelTaskWriteReply       = "reply"             // ReplyWriter
	ModelTaskEmbed            = "embed"             // Embedder
)
