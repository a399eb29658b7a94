package openai

// Task names one kind of request the provider sends. It labels metrics and
// usage, names the JSON schema of the request (which a scripted test server
// routes on) and names the prompt file, prompts/<task>.tmpl.
type Task string

// The tasks: one per method of memento.LanguageModel, plus the health check
// and embeddings.
const (
	TaskUnderstand       Task = "understand_request"
	TaskSentinel         Task = "worth_remembering"
	TaskExtractFacts     Task = "extract_facts"
	TaskReviewExtraction Task = "review_extraction"
	TaskAssignAttributes Task = "assign_attributes"
	TaskMergeFact        Task = "merge_fact"
	TaskReviewMerge      Task = "review_merge"
	TaskSummarise        Task = "summarise"
	TaskPreferences      Task = "extract_preferences"
	TaskDescribeCluster  Task = "describe_cluster"
	TaskWriteReply       Task = "write_reply"
	TaskCheck            Task = "check"
	TaskEmbed            Task = "embed"
)

// Tasks lists the language-model tasks (not check and embed) in a stable
// order.
func Tasks() []Task {
	return []Task{TaskUnderstand, TaskSentinel, TaskExtractFacts, TaskReviewExtraction,
		TaskAssignAttributes, TaskMergeFact, TaskReviewMerge, TaskSummarise, TaskPreferences,
		TaskDescribeCluster, TaskWriteReply}
}
