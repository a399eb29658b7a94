package task

import (
	"context"
	"testing"
)

// TestStopWaitsForTheWork: Stop cancels the work's context and returns
// only once the work has returned.
func TestStopWaitsForTheWork(t *testing.T) {
	started, finished := make(chan struct{}), false
	tk := Start(func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		finished = true
	})
	<-started
	tk.Stop()
	if !finished {
		t.Error("Stop returned before the work did")
	}
	var none *Task
	none.Stop()
}
