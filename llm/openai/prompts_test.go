package openai

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var goldenSchema = []memento.AttributeSpec{
	{Name: "LIKES", Description: "Titles, people and themes the user likes.", Mode: "semantic"},
	{Name: "DISLIKES", Description: "Titles, people and themes the user dislikes.", Mode: "semantic"},
	{Name: "WATCHING_HABIT", Description: "When, where and with whom the user watches.", Mode: "episodic"},
}

// goldenInputs are the fixed inputs each task's prompt is rendered from.
func goldenInputs() map[Task]any {
	year := func(y int) *int { return &y }
	ctx := memento.NewActiveContext()
	ctx.Genres = []string{"Science Fiction"}
	ctx.TitleType = memento.TypeMovie
	ctx.MinYear, ctx.MaxYear = year(1990), year(1999)
	ctx.ExcludedTitleIDs = []string{"wiki:The_Matrix"}
	shown := []memento.Title{
		{ID: "wiki:Gattaca", Title: "Gattaca", Type: "movie", Year: 1997, Genres: []string{"Science Fiction", "Drama"}, Cast: []string{"Ethan Hawke", "Uma Thurman", "Jude Law", "Alan Arkin"}, Overview: "A genetically inferior man assumes the identity of a superior one."},
		{ID: "wiki:Contact_(1997_film)", Title: "Contact", Type: "movie", Year: 1997, Genres: []string{"Science Fiction"}},
	}
	merge := memento.MergeInput{Attribute: goldenSchema[0], Current: "likes westerns", Fact: memento.Fact{Text: "does not like horror", Negated: true}, RepairNote: "Keep westerns."}
	return map[Task]any{
		TaskUnderstand: understandData{UnderstandInput: memento.UnderstandInput{Message: "Make it older, and only with Jodie Foster.", Context: ctx, Summary: "The user wants 90s science fiction movies.", LastShown: shown}},
		TaskSentinel: struct {
			Message string
			Schema  []memento.AttributeSpec
		}{"I always watch films with my kids on Sunday afternoons.", goldenSchema},
		TaskExtractFacts: memento.ExtractInput{Message: "I loved Alien, but I can't stand jump scares.",
			Previous:   []memento.Fact{{Text: "loved Alien"}, {Text: "watches horror every weekend"}},
			RepairNote: `Remove "watches horror every weekend": the message does not say it. Add "does not like jump scares".`},
		TaskReviewExtraction: struct {
			Message string
			Facts   []memento.Fact
		}{"I loved Alien, but I can't stand jump scares.", []memento.Fact{{Text: "loved Alien"}, {Text: "does not like jump scares", Negated: true}}},
		TaskAssignAttributes: struct {
			Facts  []memento.Fact
			Schema []memento.AttributeSpec
		}{[]memento.Fact{{Text: "loved Alien"}, {Text: "watches with their kids on Sundays"}, {Text: "has a dog"}}, goldenSchema},
		TaskMergeFact: merge,
		TaskReviewMerge: struct {
			In     memento.MergeInput
			Merged string
		}{merge, "likes westerns, does not like horror"},
		TaskSummarise: memento.SummariseInput{Previous: "The user asked for 90s science fiction movies.", MaxChars: 600, Messages: []memento.Message{
			{Role: memento.RoleUser, Text: "Not those, something older.", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
			{Role: memento.RoleAssistant, Text: "How about Alien (1979)?"},
		}},
		TaskPreferences: struct{ Message string }{"I don't like very sweet desserts, but I love Denis Villeneuve's films."},
		TaskDescribeCluster: struct{ Members []memento.ClusterMember }{[]memento.ClusterMember{
			{Concept: "quiet keyboards", Weight: 0.8}, {Concept: "clicky keyboards", Weight: -0.55}, {Concept: "low-profile keyboards", Weight: 0.3},
		}},
		TaskWriteReply: memento.ReplyInput{Message: "Something older, please.", Context: ctx, Searched: true, Titles: shown,
			Notes: []string{"Excluded 1 title already shown."}, Summary: "The user wants 90s science fiction movies.",
			Memories: []string{"LIKES: loved Alien"}, Question: "", MemoryEffect: "leaving out Alien, which you have seen"},
		TaskCheck: nil,
	}
}

func TestPromptsGolden(t *testing.T) {
	p, err := loadPrompts()
	if err != nil {
		t.Fatal(err)
	}
	inputs := goldenInputs()
	for _, task := range append(Tasks(), TaskCheck) {
		t.Run(string(task), func(t *testing.T) {
			in, ok := inputs[task]
			if !ok {
				t.Fatalf("no golden input for %s", task)
			}
			pr, err := p.render(task, in)
			if err != nil {
				t.Fatal(err)
			}
			schema, err := json.MarshalIndent(schemaFor(task, goldenSchema), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got := "## system\n" + pr.System + "\n\n## user\n" + pr.User + "\n\n## schema\n" + string(schema) + "\n"
			checkGolden(t, string(task), got)
		})
	}
	t.Run("understand_request with genres", func(t *testing.T) {
		in := understandData{UnderstandInput: memento.UnderstandInput{Message: "Some sci-fi comedies", Context: memento.NewActiveContext()},
			Genres: []string{"Comedy", "Drama", "Science Fiction"}}
		pr, err := p.render(TaskUnderstand, in)
		if err != nil {
			t.Fatal(err)
		}
		schema, err := json.MarshalIndent(understandSchema(in.Genres).Properties[3].schema, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got := "## system\n" + pr.System + "\n\n## user\n" + pr.User + "\n\n## schema of genres\n" + string(schema) + "\n"
		checkGolden(t, "understand_request_genres", got)
	})
	t.Run("write_reply about a title", func(t *testing.T) {
		about := memento.ReplyInput{Message: "Tell me more about the first one.", Context: memento.NewActiveContext(),
			About: &memento.Title{ID: "wiki:Gattaca", Title: "Gattaca", Type: "movie", Year: 1997, Genres: []string{"Science Fiction", "Drama"},
				Cast: []string{"Ethan Hawke", "Uma Thurman", "Jude Law", "Alan Arkin"}, RuntimeMinutes: 106,
				Overview: "A genetically inferior man assumes the identity of a superior one."}}
		pr, err := p.render(TaskWriteReply, about)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "write_reply_about", "## system\n"+pr.System+"\n\n## user\n"+pr.User+"\n")
	})
	t.Run("repair", func(t *testing.T) {
		got, err := p.renderRepair(errors.New(`the JSON does not match the schema: $.facts[0] is missing the required field "text".`))
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "repair", got+"\n")
	})
	t.Run("json_object", func(t *testing.T) {
		got, err := objectModeInstructions(verdictSchema())
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "json_object", strings.TrimSpace(got)+"\n")
	})
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from its golden file (-want +got); run go test -update if the change is intended:\n%s", path, diff)
	}
}

// TestSchemasAreStrict checks every schema against the rules of OpenAI's
// strict structured output: an object root, every object closed and
// requiring all its properties, nullable enums listing null.
func TestSchemasAreStrict(t *testing.T) {
	var walk func(path string, s *jsonSchema)
	walk = func(path string, s *jsonSchema) {
		if slices.Contains(s.Type, "object") {
			if !s.Closed {
				t.Errorf("%s: object is not closed", path)
			}
			var names []string
			for _, p := range s.Properties {
				names = append(names, p.Name)
				walk(path+"."+p.Name, p.schema)
			}
			if !slices.Equal(names, s.Required) {
				t.Errorf("%s: required %v, want every property %v", path, s.Required, names)
			}
		}
		if s.Items != nil {
			walk(path+"[]", s.Items)
		}
		if s.Enum != nil && slices.Contains(s.Type, "null") && !slices.Contains(s.Enum, any(nil)) {
			t.Errorf("%s: nullable enum does not list null", path)
		}
	}
	for _, task := range append(Tasks(), TaskCheck) {
		s := schemaFor(task, goldenSchema)
		if s == nil || !slices.Equal(s.Type, []string{"object"}) {
			t.Errorf("%s: root schema is not an object", task)
			continue
		}
		walk(string(task), s)
	}
}
