package openai

import (
	"fmt"

	"github.com/memento-ai/memento"
)

// OutputError is returned when a model's output stayed unusable after the
// repair request: it is empty, cut off, not JSON, does not match the
// task's schema, or breaks a rule of the task (a rejection without a
// reason, a summary over its length). Callers reach it with errors.As to
// log the output, and memento.ErrorCode sees its code through Unwrap:
// always EUPSTREAM, since the server answered and the answer is what
// failed. That is the code a stand-in (llm/fallback) answers for; as an
// HTTP status it is 502, never 500, because the fault is the model's.
type OutputError struct {
	// Task is the task whose output was unusable.
	Task Task
	// Code is memento.EUPSTREAM.
	Code string
	// Output is the model's last reply, shortened to 2,000 bytes.
	Output string
	// Err says what was wrong with the output.
	Err error

	app *memento.Error
}

func newOutputError(task Task, output string, err error) *OutputError {
	if len(output) > 2000 {
		output = output[:2000] + "…"
	}
	return &OutputError{
		Task:   task,
		Code:   memento.EUPSTREAM,
		Output: output,
		Err:    err,
		app:    memento.WrapError(memento.EUPSTREAM, err, "The language model gave an unusable answer (%s).", task),
	}
}

// Error says which task failed and why.
func (e *OutputError) Error() string {
	return fmt.Sprintf("openai %s: unusable model output after repair: %v", e.Task, e.Err)
}

// Unwrap returns the application error carrying Code, whose cause is Err.
func (e *OutputError) Unwrap() error { return e.app }
