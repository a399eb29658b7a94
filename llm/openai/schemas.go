package openai

import (
	"github.com/memento-ai/memento"
)

// The output schema of every task. Lists are wrapped in an object because
// strict structured output wants an object at the root. Each schema has a
// wire type the output decodes into before it becomes a memento value.

// noAttribute is what the attributor answers for a fact no attribute fits.
const noAttribute = "NONE"

// maxGenreEnum bounds the genre vocabulary put into the understanding
// schema as an enum; a larger one is only listed in the prompt.
const maxGenreEnum = 200

// understandSchema restricts genres to the catalog's vocabulary when it is
// known and small enough.
func understandSchema(genres []string) *jsonSchema {
	year := func() *jsonSchema { return nullable(between(integer(), memento.MinYear, memento.MaxYear)) }
	genreOf := func() *jsonSchema {
		genre := str()
		if len(genres) > 0 && len(genres) <= maxGenreEnum {
			genre = enumOf(str(), genres...)
			// An unknown genre is dropped by UnderstandRequest, not worth
			// failing the turn for.
			genre.openEnum = true
		}
		return genre
	}
	genre := genreOf()
	// A title reference: a position in the titles just shown (1 for the
	// first, -1 for the last) or a name as the user wrote it.
	refs := func() *jsonSchema {
		return nullable(array(object(
			prop("position", nullable(between(integer(), -memento.MaxCount, memento.MaxCount))),
			prop("name", nullable(str())),
		)))
	}
	return object(
		prop("search", boolean()),
		prop("replace", boolean()),
		prop("reject", boolean()),
		prop("genres", nullable(array(genre))),
		prop("titleType", nullable(enumOf(str(), memento.TypeMovie, memento.TypeTVSeries))),
		prop("minYear", year()),
		prop("maxYear", year()),
		prop("yearShift", nullable(enumOf(str(), "older", "newer"))),
		prop("people", nullable(array(str()))),
		prop("freeText", nullable(str())),
		prop("isAdult", nullable(boolean())),
		prop("count", between(integer(), 0, memento.MaxPageSize)),
		prop("recognised", boolean()),
		prop("question", nullable(str())),
		prop("excludeGenres", nullable(array(genreOf()))),
		prop("like", refs()),
		prop("about", refs()),
		prop("seen", refs()),
		prop("rejectTitles", refs()),
		prop("corrections", nullable(array(object(prop("from", str()), prop("to", str()))))),
		prop("soft", nullable(array(object(
			prop("kind", enumOf(str(), memento.SoftRuntime, memento.SoftPlatform, memento.SoftMood)),
			prop("value", str()),
			prop("said", str()),
		)))),
	)
}

// verdictSchema puts the reason first: a model that writes its reasoning
// before its verdict judges better.
func verdictSchema() *jsonSchema {
	return object(prop("reason", str()), prop("ok", boolean()))
}

type verdictOutput struct {
	Reason string `json:"reason"`
	OK     bool   `json:"ok"`
}

func factsSchema() *jsonSchema {
	return object(prop("facts", array(object(
		prop("text", str()),
		prop("negated", boolean()),
	))))
}

type factsOutput struct {
	Facts []memento.Fact `json:"facts"`
}

// assignmentsSchema lists the schema's attribute names as an enum, so a
// server with strict output cannot invent one.
func assignmentsSchema(attrs []memento.AttributeSpec) *jsonSchema {
	names := make([]string, 0, len(attrs)+1)
	for _, a := range attrs {
		names = append(names, a.Name)
	}
	names = append(names, noAttribute)
	return object(prop("assignments", array(object(
		prop("index", integer()),
		prop("attribute", enumOf(str(), names...)),
	))))
}

type assignmentsOutput struct {
	Assignments []struct {
		Index     int    `json:"index"`
		Attribute string `json:"attribute"`
	} `json:"assignments"`
}

func mergedSchema() *jsonSchema { return object(prop("merged", str())) }

type mergedOutput struct {
	Merged string `json:"merged"`
}

func summarySchema() *jsonSchema { return object(prop("summary", str())) }

type summaryOutput struct {
	Summary string `json:"summary"`
}

func conceptsSchema() *jsonSchema {
	return object(prop("concepts", array(object(
		prop("concept", str()),
		prop("sign", enumOf(integer(), -1, 1)),
		prop("strength", between(number(), 0, 1)),
		prop("kind", enumOf(str(), memento.KindTaste, memento.KindFact)),
	))))
}

type conceptsOutput struct {
	Concepts []memento.Concept `json:"concepts"`
}

// The stances of a cluster's members.
const (
	stanceSupport = "support"
	stanceOppose  = "oppose"
)

func clusterSchema() *jsonSchema {
	return object(
		prop("description", str()),
		prop("stances", array(enumOf(str(), stanceSupport, stanceOppose))),
	)
}

func replySchema() *jsonSchema { return object(prop("reply", str())) }

type replyOutput struct {
	Reply string `json:"reply"`
}

func checkSchema() *jsonSchema { return object(prop("ok", boolean())) }

type checkOutput struct {
	OK bool `json:"ok"`
}

// schemaFor returns the output schema of a task for golden files and
// tests; assign_attributes takes its enum from attrs.
func schemaFor(task Task, attrs []memento.AttributeSpec) *jsonSchema {
	switch task {
	case TaskUnderstand:
		return understandSchema(nil)
	case TaskSentinel, TaskReviewExtraction, TaskReviewMerge:
		return verdictSchema()
	case TaskExtractFacts:
		return factsSchema()
	case TaskAssignAttributes:
		return assignmentsSchema(attrs)
	case TaskMergeFact:
		return mergedSchema()
	case TaskSummarise:
		return summarySchema()
	case TaskPreferences:
		return conceptsSchema()
	case TaskDescribeCluster:
		return clusterSchema()
	case TaskWriteReply:
		return replySchema()
	case TaskCheck:
		return checkSchema()
	}
	return nil
}
