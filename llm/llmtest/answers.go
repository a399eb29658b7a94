package llmtest

// The remaining chat tasks llm/openai sends, by schema name, beside the
// pipeline's in scenario.go.
const (
	TaskUnderstand      = "understand_request"
	TaskSummarise       = "summarise"
	TaskPreferences     = "extract_preferences"
	TaskDescribeCluster = "describe_cluster"
	TaskWriteReply      = "write_reply"
	TaskCheck           = "check"
)

// Answers returns a usable answer to every chat task, as the JSON object
// the assistant's message holds, fresh on each call so a test may break
// one (delete a required field) before passing them to AnswerAll. They fit
// the inputs `memento llm check` sends: the attribute schema has LIKES and
// DISLIKES and the cluster two members.
func Answers() map[string]map[string]any {
	return map[string]map[string]any{
		TaskCheck: {"ok": true},
		TaskUnderstand: {
			"search": true, "replace": true, "reject": false, "genres": []string{"Comedy"},
			"titleType": "movie", "minYear": 1990, "maxYear": 1999, "count": 3, "recognised": true,
		},
		TaskSentinel:         {"reason": "The user states what they like.", "ok": true},
		TaskExtractFacts:     {"facts": []map[string]any{{"text": "loved Arrival", "negated": false}}},
		TaskReviewExtraction: {"reason": "Every fact is in the message.", "ok": true},
		TaskAssignAttributes: {"assignments": []map[string]any{{"index": 0, "attribute": "LIKES"}}},
		TaskMergeFact:        {"merged": "loved Alien and Arrival"},
		TaskReviewMerge:      {"reason": "Nothing was lost.", "ok": true},
		TaskSummarise:        {"summary": "The user loved Arrival."},
		TaskPreferences:      {"concepts": []map[string]any{{"concept": "arrival", "sign": 1, "strength": 0.8, "kind": "taste"}}},
		TaskDescribeCluster:  {"description": "Tense, clever films", "stances": []string{"support", "support"}},
		TaskWriteReply:       {"reply": "Here are some comedies from the 90s."},
	}
}

// AnswerAll makes answers the server's Default for each task, and turns on
// AutoEmbed with dim dimensions when dim is positive: a model server that
// answers every request the same way, however many a test sends.
func (s *Server) AnswerAll(answers map[string]map[string]any, dim int) {
	for task, a := range answers {
		s.Default(task, ChatJSON(a))
	}
	if dim > 0 {
		s.AutoEmbed(dim)
	}
}
