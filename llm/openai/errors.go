package openai

import (
	"fmt"

	"github.com/memento-ai/memento"
)

// OutputError is returned when a model's output stayed unusable after the
// repair request: it is not JSON, does not match the task's schema, or
// breaks a rule of the task (a rejection without a reason, a summary over
// its length). Callers reach it with errors.As to log the output, and
// memento.ErrorCode sees its code through Unwrap: EUNAVAILABLE when the
// model returned nothing or was cut off (a server-side limit), EINTERNAL
// otherwise.
type OutputError struct {
	// Task is the task whose output was unusable.
	Task Task
	// Code is memento.EINTERNAL or memento.EUNAVAILABLE.
	Code string
	// Output is the model's last reply, shortened to 2,000 bytes.
	Output string
	// Err says what was wrong with the output.
	Err error

	app *memento.Error
}

func newOutputError(task Task, output string, err error, unavailable bool) *OutputError {
	code := memento.EINTERNAL
	if unavailable {
		code = memento.EUNAVAILABLE
	}
	if len(output) > 2000 {
		output = output[:2000] + "…"
	}
	return &OutputError{
		Task:   task,
		Code:   code,
		Output: output,
		Err:    err,
		app:    memento.WrapError(code, err, "The language model gave an unusable answer (%s).", task),
	}
}

// Error says which task failed and why.
func (e *OutputError) Error() string {
	return fmt.Sprintf("openai %s: unusable model output after repair: %v", e.Task, e.Err)
}

// Unwrap returns the application error carrying Code, whose cause is Err.
func (e *OutputError) Unwrap() error { return e.app }
