package engine

import (
	"runtime"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

func TestBackgroundProcessorsSetting(t *testing.T) {
	c := DefaultConfig()
	c.DB = t.TempDir() + "/m.db"
	if err := ApplyEnv(c.EnvSettings(), func(k string) string {
		if k == "MEMENTO_BACKGROUND_PROCESSORS" {
			return "3"
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	if c.BackgroundProcessors != 3 || c.backgroundProcessors() != 3 {
		t.Errorf("MEMENTO_BACKGROUND_PROCESSORS=3 gave %d (%d in use)", c.BackgroundProcessors, c.backgroundProcessors())
	}
	c.BackgroundProcessors = 0
	if got := c.backgroundProcessors(); got != runtime.GOMAXPROCS(0) {
		t.Errorf("the default is %d processors, want GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
	c.BackgroundProcessors = -1
	err := c.Validate()
	if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "MEMENTO_BACKGROUND_PROCESSORS") {
		t.Errorf("a negative count: got %v, want EINVALID naming the variable", err)
	}
}
