package openai

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"text/template"

	"github.com/memento-ai/memento"
)

// promptFS holds one template file per task, each defining a "system" and a
// "user" template, plus common.tmpl (shared wording) and repair.tmpl (the
// follow-up sent after unusable output).
//
//go:embed prompts/*.tmpl
var promptFS embed.FS

// prompt is a rendered task prompt.
type prompt struct {
	System string
	User   string
}

// prompts are the parsed templates of every task.
type prompts struct {
	tasks  map[Task]*template.Template
	repair *template.Template
}

// loadPrompts parses the embedded templates once per process; a template
// that does not parse is a build defect that New reports.
var loadPrompts = sync.OnceValues(func() (*prompts, error) {
	p := &prompts{tasks: map[Task]*template.Template{}}
	for _, t := range append(Tasks(), TaskCheck, TaskEmotion, TaskReadActions) {
		tmpl, err := template.New(string(t)).Funcs(promptFuncs).Option("missingkey=error").
			ParseFS(promptFS, "prompts/common.tmpl", "prompts/"+string(t)+".tmpl")
		if err != nil {
			return nil, fmt.Errorf("parse prompt %s: %w", t, err)
		}
		for _, name := range []string{"system", "user"} {
			if tmpl.Lookup(name) == nil {
				return nil, fmt.Errorf("parse prompt %s: no %q template", t, name)
			}
		}
		p.tasks[t] = tmpl
	}
	repair, err := template.New("repair").Funcs(promptFuncs).ParseFS(promptFS, "prompts/repair.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parse repair prompt: %w", err)
	}
	p.repair = repair
	return p, nil
})

var promptFuncs = template.FuncMap{
	// json quotes user text, so that where it begins and ends is never in
	// doubt and it cannot pass for instructions.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"inc":  func(i int) int { return i + 1 },
	"join": strings.Join,
	"first": func(n int, s []string) []string {
		return s[:min(n, len(s))]
	},
	"weight":      func(w float64) string { return fmt.Sprintf("%+.2f", w) },
	"constraints": constraints,
}

// contextView is the active context as a prompt shows it: the constraints,
// and only the number of excluded titles, whose ids mean nothing to a model
// and can run to hundreds.
type contextView struct {
	Genres         []string `json:"genres"`
	TitleType      string   `json:"titleType"`
	MinYear        *int     `json:"minYear"`
	MaxYear        *int     `json:"maxYear"`
	People         []string `json:"people"`
	FreeText       string   `json:"freeText"`
	IsAdult        bool     `json:"isAdult"`
	Count          int      `json:"count"`
	ExcludedTitles int      `json:"excludedTitles"`
}

func constraints(c memento.ActiveContext) contextView {
	c.Normalize()
	return contextView{Genres: c.Genres, TitleType: c.TitleType, MinYear: c.MinYear, MaxYear: c.MaxYear,
		People: c.People, FreeText: c.FreeText, IsAdult: c.IsAdult, Count: c.Count, ExcludedTitles: len(c.ExcludedTitleIDs)}
}

// render fills the task's templates with data.
func (p *prompts) render(task Task, data any) (prompt, error) {
	tmpl := p.tasks[task]
	if tmpl == nil {
		return prompt{}, fmt.Errorf("no prompt for task %s", task)
	}
	system, err := execute(tmpl, "system", data)
	if err != nil {
		return prompt{}, err
	}
	user, err := execute(tmpl, "user", data)
	if err != nil {
		return prompt{}, err
	}
	return prompt{System: system, User: user}, nil
}

// renderRepair writes the follow-up that shows the model what was wrong.
func (p *prompts) renderRepair(problem error) (string, error) {
	msg := strings.TrimRight(problem.Error(), ".")
	return execute(p.repair, "user", struct{ Problem string }{msg})
}

var blankLines = regexp.MustCompile(`\n{3,}`)

func execute(tmpl *template.Template, name string, data any) (string, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("render %s prompt %s: %w", tmpl.Name(), name, err)
	}
	return blankLines.ReplaceAllString(strings.TrimSpace(b.String()), "\n\n"), nil
}

// objectModeInstructions is appended to the system prompt when the server
// only promises a JSON object: the schema it would otherwise enforce is
// spelled out for the model instead.
func objectModeInstructions(schema *jsonSchema) (string, error) {
	b, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		return "", fmt.Errorf("marshal schema: %w", err)
	}
	return "\n\nThe response schema (JSON Schema):\n" + string(b), nil
}
