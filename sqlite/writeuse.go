package sqlite

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
)

// The writer's time by write (memento.WriterStats.ByWrite).
//
// The committer runs the writes of a group commit one after the other,
// and times each. A write is named by the function that sent it: the
// store's operations pass the committer a closure, and Go names a closure
// after the function that holds it (sqlite.(*DB).WriteMemoryBatch.func1),
// so the name needs nothing from the callers and stays right as they
// change.

// writeUses counts the writer's time by write.
type writeUses struct {
	mu   sync.Mutex
	uses map[string]memento.WriteUse
}

// add counts a write named name that held the writer for d.
func (w *writeUses) add(name string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.uses == nil {
		w.uses = map[string]memento.WriteUse{}
	}
	u := w.uses[name]
	u.Writes++
	u.Seconds += d.Seconds()
	w.uses[name] = u
}

// read returns a copy of the counts.
func (w *writeUses) read() map[string]memento.WriteUse {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.uses) == 0 {
		return nil
	}
	out := make(map[string]memento.WriteUse, len(w.uses))
	for name, u := range w.uses {
		out[name] = u
	}
	return out
}

// writeNames holds the name of each write function met, by its code
// address.
var writeNames sync.Map

// writeName names the write fn: the function it is a closure of, or
// itself (writeFuncName).
func writeName(fn any) string {
	pc := reflect.ValueOf(fn).Pointer()
	if name, ok := writeNames.Load(pc); ok {
		return name.(string)
	}
	name := "unknown"
	if f := runtime.FuncForPC(pc); f != nil {
		name = writeFuncName(f.Name())
	}
	writeNames.Store(pc, name)
	return name
}

// writeFuncName shortens a function's full name to what names a write:
// without the package, the closures' suffixes and the DB receiver, so
// github.com/memento-ai/memento/sqlite.(*DB).WriteMemoryBatch.func1 is
// WriteMemoryBatch and sqlite.(*ftsMerger).mergeOnce.func1.2 is
// ftsMerger.mergeOnce.
func writeFuncName(full string) string {
	name := full[strings.LastIndexByte(full, '/')+1:]
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:] // the package
	}
	name = strings.TrimSuffix(name, "-fm") // a method value
	// A closure is named after the function that holds it, with .funcN
	// (and .M for a closure within it) after: cut at the first.
	for i := 0; ; {
		j := strings.Index(name[i:], ".func")
		if j < 0 {
			break
		}
		at := i + j
		if rest := name[at+len(".func"):]; rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			name = name[:at]
			break
		}
		i = at + 1
	}
	if strings.HasPrefix(name, "(") {
		// A method: (*T).m or (T).m is T.m.
		if end := strings.IndexByte(name, ')'); end > 0 {
			name = strings.TrimPrefix(name[1:end], "*") + name[end+1:]
		}
	}
	name = strings.TrimPrefix(name, "DB.")
	if name == "" {
		return full
	}
	return name
}
