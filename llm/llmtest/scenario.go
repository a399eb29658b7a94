package llmtest

import (
	"github.com/memento-ai/memento"
)

// The chat tasks whose outputs a PipelineCase scripts. They are the
// schema names llm/openai sends, and its tests check that they match.
const (
	TaskSentinel         = "worth_remembering"
	TaskExtractFacts     = "extract_facts"
	TaskReviewExtraction = "review_extraction"
	TaskAssignAttributes = "assign_attributes"
	TaskMergeFact        = "merge_fact"
	TaskReviewMerge      = "review_merge"
)

// PipelineCase is one scripted run of the attribute pipeline (sentinel,
// extractor, extractor reviewer, attributor, aggregator, aggregator
// reviewer) over one message: what each step's model answers, in call
// order, and what the pipeline should end up with. Tests of the pipeline
// use its typed values with a hand-written model double, or Script it on a
// Server and run llm/openai against it.
type PipelineCase struct {
	Name    string
	Message string
	// Schema holds the attributes the case uses.
	Schema []memento.AttributeSpec
	// Sentinel is the sentinel's verdict on Message.
	Sentinel memento.Verdict
	// Extractions are the extractor's answers in call order, and Reviews
	// the reviewer's verdict on each.
	Extractions [][]memento.Fact
	Reviews     []memento.Verdict
	// Invented is the fact the first extraction made up, which no memory
	// may hold.
	Invented memento.Fact
	// Attributed is the attributor's answer for the last extraction.
	Attributed []memento.AttributedFact
	// Merges are the aggregator's answers for the attributed facts in
	// order, each merged into the value before it of the same attribute
	// (semantic mode), and MergeReviews the reviewer's verdict on each.
	Merges       []string
	MergeReviews []memento.Verdict
	// Want is the value of each attribute at the end (semantic mode).
	Want map[string]string
}

// InventedFact is the case of an extractor that invents a fact: the
// message says nothing about watching horror every weekend, the reviewer
// says so in its repair note, and the second extraction is faithful.
func InventedFact() PipelineCase {
	likes := memento.AttributeSpec{Name: "LIKES", Description: "Titles, people and themes the user likes.", Mode: "semantic"}
	dislikes := memento.AttributeSpec{Name: "DISLIKES", Description: "Titles, people and themes the user dislikes.", Mode: "semantic"}
	alien := memento.Fact{Text: "loved Alien"}
	arrival := memento.Fact{Text: "loved Arrival"}
	jumps := memento.Fact{Text: "does not like jump scares", Negated: true}
	invented := memento.Fact{Text: "watches horror films every weekend"}
	return PipelineCase{
		Name:     "invented fact",
		Message:  "I loved Alien and Arrival, but I can't stand jump scares.",
		Schema:   []memento.AttributeSpec{likes, dislikes},
		Sentinel: memento.Verdict{OK: true, Reason: "The user states films they loved and something they dislike."},
		Extractions: [][]memento.Fact{
			{alien, arrival, jumps, invented},
			{alien, arrival, jumps},
		},
		Reviews: []memento.Verdict{
			{OK: false, Reason: `Remove "watches horror films every weekend": the message does not say it.`},
			{OK: true, Reason: "Every fact is stated in the message and none is missing."},
		},
		Invented: invented,
		Attributed: []memento.AttributedFact{
			{Fact: alien, Attribute: "LIKES"},
			{Fact: arrival, Attribute: "LIKES"},
			{Fact: jumps, Attribute: "DISLIKES"},
		},
		Merges: []string{"loved Alien", "loved Alien and Arrival", "does not like jump scares"},
		MergeReviews: []memento.Verdict{
			{OK: true, Reason: "The merge keeps the fact."},
			{OK: true, Reason: "The merge keeps both films."},
			{OK: true, Reason: "The merge keeps the fact."},
		},
		Want: map[string]string{"LIKES": "loved Alien and Arrival", "DISLIKES": "does not like jump scares"},
	}
}

// Script enqueues the case's model answers on s, per task, in the wire
// format llm/openai expects.
func (c PipelineCase) Script(s *Server) {
	s.EnqueueTask(TaskSentinel, verdict(c.Sentinel))
	for _, facts := range c.Extractions {
		wire := make([]map[string]any, len(facts))
		for i, f := range facts {
			wire[i] = map[string]any{"text": f.Text, "negated": f.Negated}
		}
		s.EnqueueTask(TaskExtractFacts, ChatJSON(map[string]any{"facts": wire}))
	}
	for _, v := range c.Reviews {
		s.EnqueueTask(TaskReviewExtraction, verdict(v))
	}
	assignments := make([]map[string]any, len(c.Attributed))
	for i, a := range c.Attributed {
		attr := a.Attribute
		if attr == "" {
			attr = "NONE"
		}
		assignments[i] = map[string]any{"index": i, "attribute": attr}
	}
	s.EnqueueTask(TaskAssignAttributes, ChatJSON(map[string]any{"assignments": assignments}))
	for _, m := range c.Merges {
		s.EnqueueTask(TaskMergeFact, ChatJSON(map[string]any{"merged": m}))
	}
	for _, v := range c.MergeReviews {
		s.EnqueueTask(TaskReviewMerge, verdict(v))
	}
}

func verdict(v memento.Verdict) Response {
	return ChatJSON(map[string]any{"reason": v.Reason, "ok": v.OK})
}
