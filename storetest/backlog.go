package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// Backlog records what a backlog handler was given, and checks that no
// two batches of one user overlap. Backend tests that run several queues
// on one database use it too.
type Backlog struct {
	mu sync.Mutex
	// Done lists, per user, the payloads of the jobs answered nil, in
	// the order they were answered.
	Done map[string][]string
	// Batches counts the handler's calls and Largest the most jobs one
	// call was given.
	Batches, Largest int
	// Overlaps counts batches that began while another batch of the same
	// user ran.
	Overlaps int
	running  map[memento.Scope]int
	// Fail answers a job whose payload it names with an error; Short, on
	// a batch that holds more jobs than it, answers only that many (the
	// rest were not run); Pause is how long each batch takes.
	Fail  map[string]bool
	Short int
	Pause time.Duration
}

// NewBacklog returns an empty recorder.
func NewBacklog() *Backlog {
	return &Backlog{Done: map[string][]string{}, running: map[memento.Scope]int{}, Fail: map[string]bool{}}
}

// Handle is the memento.BacklogHandler of the recorder. Payloads are JSON
// strings.
func (b *Backlog) Handle(ctx context.Context, s memento.Scope, jobs []memento.BacklogJob) []error {
	b.mu.Lock()
	b.Batches++
	b.Largest = max(b.Largest, len(jobs))
	if b.running[s] > 0 {
		b.Overlaps++
	}
	b.running[s]++
	pause, short := b.Pause, b.Short
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.running[s]--
		b.mu.Unlock()
	}()
	if pause > 0 {
		time.Sleep(pause)
	}
	n := len(jobs)
	if short > 0 && n > short {
		n = short
	}
	out := make([]error, n)
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, j := range jobs[:n] {
		var p string
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			out[i] = memento.Errorf(memento.EINVALID, "payload %s: %v", j.Payload, err)
			continue
		}
		if b.Fail[p] {
			out[i] = errors.New("failed in the batch: " + p)
			continue
		}
		b.Done[s.User] = append(b.Done[s.User], p)
	}
	return out
}

// DoneOf returns a copy of what was done for user.
func (b *Backlog) DoneOf(user string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.Done[user])
}

// byUser returns a jobsFor that enqueues, for each message, a backlog job
// of kind whose payload is the message's text.
func byUser(kind string) func(memento.Message) []memento.JobRequest {
	return func(m memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: kind, Payload: m.Text, ByUser: true}}
	}
}

// startQueue starts st's queue and stops it when the test ends.
func startQueue(t *testing.T, st Store) {
	t.Helper()
	qctx, cancel := context.WithCancel(context.Background())
	if err := st.Start(qctx); err != nil {
		cancel()
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		stop, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = st.Stop(stop)
		cancel()
	})
}

// waitUnfinished waits until the queue has no unfinished job.
func waitUnfinished(t *testing.T, st Store, timeout time.Duration) {
	t.Helper()
	waitFor(t, "every job to end", timeout, func() bool {
		n, err := st.Unfinished(t.Context())
		if err != nil {
			t.Fatalf("Unfinished: %v", err)
		}
		return n == 0
	})
}

// testBacklog checks the users' backlogs (memento.JobRequest.ByUser): jobs
// enqueued by user wait in one backlog job per user however many arrive
// before it runs, count as unfinished and in the lag under their own
// kind, and reach the backlog handler in the order they were enqueued,
// each once; a job the handler fails runs again as a job of its own kind,
// and jobs it did not reach run in a later batch; a forgotten user's
// backlog goes with the user.
func testBacklog(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	rec := NewBacklog()
	rec.Fail["a3"] = true
	rec.Short = 4 // the first batch of ann's seven jobs ends after four
	var mu sync.Mutex
	var own []string
	st.Handle("bl", func(ctx context.Context, kind string, payload json.RawMessage) error {
		var p string
		_ = json.Unmarshal(payload, &p)
		mu.Lock()
		own = append(own, p)
		mu.Unlock()
		return nil
	}, memento.JobOptions{})
	st.HandleBacklog(rec.Handle, memento.BacklogOptions{MaxBatch: 5})

	for i := 1; i <= 7; i++ {
		if _, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{msg(memento.RoleUser, fmt.Sprintf("a%d", i))}, byUser("bl")); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
	}
	// Two messages of one append, and an equal request asked twice.
	if _, err := st.AppendMessages(ctx, bob, "t1", []memento.Message{msg(memento.RoleUser, "b1"), msg(memento.RoleUser, "b2")},
		func(m memento.Message) []memento.JobRequest { return append(byUser("bl")(m), byUser("bl")(m)...) }); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if backlogJobs := jobsOf(t, st, memento.JobBacklog); len(backlogJobs) != 2 {
		t.Errorf("backlog jobs before the queue ran = %d, want 2 (one per user, the later jobs joining it)", len(backlogJobs))
	}
	if n, err := st.Unfinished(ctx); err != nil || n != 2+9 {
		t.Errorf("Unfinished = %d, %v; want 11 (2 backlog jobs and the 9 jobs waiting in backlogs)", n, err)
	}
	if jc, ok := st.(JobCounter); ok {
		lag, err := jc.QueueLag(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var bl memento.QueueLag
		for _, l := range lag.Kinds {
			if l.Kind == "bl" {
				bl = l
			}
		}
		if bl.Waiting != 9 || bl.Oldest.IsZero() || lag.Waiting != 11 {
			t.Errorf("QueueLag = %+v, want 9 jobs of kind bl waiting, with their oldest, 11 in all", lag)
		}
		if stats, err := jc.JobStats(ctx); err != nil || statsOf(stats, "bl").Pending != 9 {
			t.Errorf("JobStats = %+v, %v; want 9 bl jobs pending", stats, err)
		}
	}

	startQueue(t, st)
	waitUnfinished(t, st, 30*time.Second)
	if got, want := rec.DoneOf("ann"), []string{"a1", "a2", "a4", "a5", "a6", "a7"}; !slices.Equal(got, want) {
		t.Errorf("ann's jobs done in batches = %v, want %v (in order, once each, a3 failed)", got, want)
	}
	if got, want := rec.DoneOf("bob"), []string{"b1", "b2"}; !slices.Equal(got, want) {
		t.Errorf("bob's jobs done in batches = %v, want %v (the repeated request enqueued once)", got, want)
	}
	mu.Lock()
	if !slices.Equal(own, []string{"a3"}) {
		t.Errorf("jobs run on their own = %v, want the one the batch failed (a3)", own)
	}
	mu.Unlock()
	if jobs := jobsOf(t, st, "bl"); len(jobs) != 1 || jobs[0].State != memento.JobCompleted {
		t.Errorf("bl jobs = %+v, want the failed one, completed by its kind's handler", jobs)
	}
	rec.mu.Lock()
	if rec.Largest > 5 {
		t.Errorf("a batch held %d jobs, more than MaxBatch 5", rec.Largest)
	}
	rec.mu.Unlock()

	// While the queue runs, several users' jobs arrive together: each
	// user's run once each, in order, one batch of a user at a time, and
	// those that arrive while a batch runs join the next one.
	rec.mu.Lock()
	rec.Fail, rec.Short, rec.Pause = map[string]bool{}, 0, 5*time.Millisecond
	rec.Batches = 0
	rec.mu.Unlock()
	users := []memento.Scope{{Tenant: memento.DefaultTenant, User: "u1"}, {Tenant: memento.DefaultTenant, User: "u2"},
		{Tenant: "other", User: "u1"}, {Tenant: memento.DefaultTenant, User: "u3"}}
	const each = 25
	var wg sync.WaitGroup
	errs := make(chan error, len(users))
	for _, s := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				text := fmt.Sprintf("%s/%d", s.Tenant, i)
				if _, err := st.AppendMessages(ctx, s, "t1", []memento.Message{msg(memento.RoleUser, text)}, byUser("bl")); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AppendMessages: %v", err)
	}
	waitUnfinished(t, st, 60*time.Second)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.Overlaps != 0 {
		t.Errorf("%d batches began while another batch of the same user ran", rec.Overlaps)
	}
	if rec.Batches >= len(users)*each {
		t.Errorf("%d batches for %d jobs: the jobs that arrived while a batch ran did not join the next", rec.Batches, len(users)*each)
	}
	// Tenants are apart: user u1 of two tenants has the jobs of both,
	// each tenant's in its order.
	for _, user := range []string{"u1", "u2", "u3"} {
		var def, other []string
		for _, p := range rec.Done[user] {
			if tenant, _, _ := strings.Cut(p, "/"); tenant == memento.DefaultTenant {
				def = append(def, p)
			} else {
				other = append(other, p)
			}
		}
		want := func(tenant string) []string {
			var out []string
			for i := range each {
				out = append(out, fmt.Sprintf("%s/%d", tenant, i))
			}
			return out
		}
		if !slices.Equal(def, want(memento.DefaultTenant)) {
			t.Errorf("%s's jobs in tenant %s = %v, want each once in order", user, memento.DefaultTenant, def)
		}
		if user == "u1" && !slices.Equal(other, want("other")) {
			t.Errorf("u1's jobs in tenant other = %v, want each once in order", other)
		}
		if user != "u1" && len(other) > 0 {
			t.Errorf("%s got jobs of another tenant: %v", user, other)
		}
	}
}

// testBacklogWithoutHandler checks that a queue without a backlog handler
// runs the jobs of the users' backlogs with their kinds' handlers, and
// that forgetting a user forgets the user's backlog.
func testBacklogWithoutHandler(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	var mu sync.Mutex
	var ran []string
	st.Handle("bl", func(ctx context.Context, kind string, payload json.RawMessage) error {
		var p string
		_ = json.Unmarshal(payload, &p)
		mu.Lock()
		ran = append(ran, p)
		mu.Unlock()
		return nil
	}, memento.JobOptions{})
	for _, text := range []string{"one", "two"} {
		if _, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{msg(memento.RoleUser, text)}, byUser("bl")); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
	}
	if _, err := st.AppendMessages(ctx, bob, "t1", []memento.Message{msg(memento.RoleUser, "forgotten")}, byUser("bl")); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if err := st.DeleteUser(ctx, bob); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if n, err := st.Unfinished(ctx); err != nil || n != 3 {
		t.Errorf("Unfinished = %d, %v; want 3 (ann's backlog job and her two jobs; bob's went with him)", n, err)
	}
	startQueue(t, st)
	waitUnfinished(t, st, 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(ran)
	if !slices.Equal(ran, []string{"one", "two"}) {
		t.Errorf("jobs run by their kind's handler = %v, want ann's two, once each", ran)
	}
}

// testPreferenceBatch checks WritePreferenceBatch against the writes one
// at a time: each write's merge sees what the writes before it left, a
// source applied before (or earlier in the batch) changes nothing, and the
// preferences end as the same writes one by one leave them.
func testPreferenceBatch(t *testing.T, open Opener) {
	one, batch := open(t), open(t)
	ps1, ok := one.(memento.PreferenceService)
	if !ok {
		t.Skip("the store does not implement memento.PreferenceService")
	}
	ps2 := batch.(memento.PreferenceService)
	ctx := t.Context()
	// reinforce adds concept, or strengthens it when it exists; what the
	// merge saw is recorded, to compare the two ways.
	var saw [2][]string
	reinforce := func(k int, concept string) memento.PreferenceMerge {
		return func(current []memento.Preference) (memento.PreferenceChanges, error) {
			var names []string
			for _, p := range current {
				names = append(names, fmt.Sprintf("%s:%.1f", p.Concept, p.Weight))
			}
			slices.Sort(names) // rows of one time are in the order of their random ids
			saw[k] = append(saw[k], strings.Join(names, ","))
			for _, p := range current {
				if p.Concept == concept {
					p.Weight += 1
					p.Evidence++
					return memento.PreferenceChanges{Update: []memento.Preference{p}}, nil
				}
			}
			return memento.PreferenceChanges{Insert: []memento.Preference{{Concept: concept, Weight: 1, Kind: "taste", Evidence: 1,
				Sources: []string{"m"}, FirstSeen: t0, LastSeen: t0, Embedder: "e", Vector: []float32{1, 0}}}}, nil
		}
	}
	steps := []struct{ source, concept string }{{"m1", "heist"}, {"m2", "horror"}, {"m3", "heist"}, {"m2", "horror"}, {"m4", "heist"}}
	writes := func(k int) []memento.PreferenceWrite {
		var ws []memento.PreferenceWrite
		for _, st := range steps {
			ws = append(ws, memento.PreferenceWrite{Source: st.source, Embedder: "e", Merge: reinforce(k, st.concept)})
		}
		return ws
	}
	var applied1 []bool
	for _, w := range writes(0) {
		res, err := ps1.WritePreferences(ctx, ann, w)
		if err != nil {
			t.Fatalf("WritePreferences: %v", err)
		}
		applied1 = append(applied1, res.Applied)
	}
	res, err := ps2.WritePreferenceBatch(ctx, ann, writes(1))
	if err != nil || len(res) != len(steps) {
		t.Fatalf("WritePreferenceBatch = %+v, %v", res, err)
	}
	for i, r := range res {
		if r.Applied != applied1[i] {
			t.Errorf("write %d applied %v in the batch, %v one at a time", i, r.Applied, applied1[i])
		}
	}
	if !slices.Equal(saw[0], saw[1]) {
		t.Errorf("the merges saw, one at a time:\n%v\nin a batch:\n%v", saw[0], saw[1])
	}
	p1, err := ps1.Preferences(ctx, ann)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := ps2.Preferences(ctx, ann)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(ps []memento.Preference) []string {
		var out []string
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s:%.1f:%d", p.Concept, p.Weight, p.Evidence))
		}
		slices.Sort(out)
		return out
	}
	if a, b := summary(p1), summary(p2); !slices.Equal(a, b) || len(a) != 2 {
		t.Errorf("preferences one at a time %v, in a batch %v; want the same two", a, b)
	}
	v1, _ := ps1.PreferenceVersion(ctx, ann)
	v2, _ := ps2.PreferenceVersion(ctx, ann)
	if v1.Version != v2.Version {
		t.Errorf("version %d one at a time, %d in a batch", v1.Version, v2.Version)
	}
	// A later batch: a source an earlier batch applied changes nothing,
	// a new one does.
	steps = []struct{ source, concept string }{{"m5", "horror"}, {"m1", "heist"}, {"", "heist"}}
	res, err = ps2.WritePreferenceBatch(ctx, ann, writes(1))
	if err != nil || len(res) != len(steps) {
		t.Fatalf("second WritePreferenceBatch = %+v, %v", res, err)
	}
	for i, want := range []bool{true, false, true} {
		if res[i].Applied != want {
			t.Errorf("second batch: write %d (source %q) applied %v, want %v", i, steps[i].source, res[i].Applied, want)
		}
	}
	if p2, err = ps2.Preferences(ctx, ann); err != nil {
		t.Fatal(err)
	}
	if got, want := summary(p2), []string{"heist:4.0:4", "horror:2.0:2"}; !slices.Equal(got, want) {
		t.Errorf("after the second batch %v, want %v", got, want)
	}
}

// testConcurrentPreferenceBatches sends two batches of preference writes
// for one user at once, each strengthening the same concept once a write:
// every write must see the others' committed rows (a batch's copy of the
// preferences is read inside its transaction, after the user's writes
// before it), so the concept ends with one row whose evidence counts every
// write, and no write is lost.
func testConcurrentPreferenceBatches(t *testing.T, open Opener) {
	st := open(t)
	ps, ok := st.(memento.PreferenceService)
	if !ok {
		t.Skip("the store does not implement memento.PreferenceService")
	}
	ctx := t.Context()
	strengthen := func(current []memento.Preference) (memento.PreferenceChanges, error) {
		for _, p := range current {
			if p.Concept == "heist" {
				p.Weight++
				p.Evidence++
				return memento.PreferenceChanges{Update: []memento.Preference{p}}, nil
			}
		}
		return memento.PreferenceChanges{Insert: []memento.Preference{{Concept: "heist", Weight: 1, Kind: "taste", Evidence: 1,
			Sources: []string{"m"}, FirstSeen: t0, LastSeen: t0, Embedder: "e", Vector: []float32{1, 0}}}}, nil
	}
	const batches, writes = 2, 5
	errs := make([]error, batches)
	var wg sync.WaitGroup
	for b := range batches {
		wg.Go(func() {
			var ws []memento.PreferenceWrite
			for i := range writes {
				ws = append(ws, memento.PreferenceWrite{Source: fmt.Sprintf("b%d-m%d", b, i), Embedder: "e", Merge: strengthen})
			}
			_, errs[b] = ps.WritePreferenceBatch(ctx, ann, ws)
		})
	}
	wg.Wait()
	for b, err := range errs {
		if err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
	}
	prefs, err := ps.Preferences(ctx, ann)
	if err != nil {
		t.Fatal(err)
	}
	if len(prefs) != 1 || prefs[0].Evidence != batches*writes || prefs[0].Weight != batches*writes {
		t.Errorf("after %d writes in %d batches at once: %+v; want one heist of evidence and weight %d", batches*writes, batches, prefs, batches*writes)
	}
}

// testMemoryBatch checks WriteMemoryBatch: the writes of one user's runs
// applied in order in one transaction, each checked against what the ones
// before it left (a chain of supersessions within the batch), a message
// processed before reported unwritten, and a conflict anywhere writing
// none of them.
func testMemoryBatch(t *testing.T, open Opener) {
	st := open(t)
	bw, ok := st.(memento.MemoryBatchWriter)
	if !ok {
		t.Skip("the store does not implement memento.MemoryBatchWriter")
	}
	ctx := t.Context()
	m1 := userMessage(t, st, ann, "t1", "m1", "I love heist films", 0)
	m2 := userMessage(t, st, ann, "t1", "m2", "And westerns", 1)
	m3 := userMessage(t, st, ann, "t1", "m3", "Not westerns after all", 2)
	m4 := userMessage(t, st, ann, "t1", "m4", "Horror too", 3)
	writeOK(t, st, ann, memento.MemoryWrite{Message: m1, Base: map[string]memento.MemoryBase{"LIKES": {}},
		Insert: []memento.Memory{semantic("b1", "LIKES", "heist films", m1)}, Run: run(m1, "b1")})

	// A conflict in the last write leaves the batch unwritten.
	bad := []memento.MemoryWrite{
		{Message: m2, Base: map[string]memento.MemoryBase{"LIKES": {ID: "b1", Value: "heist films"}},
			Close: []memento.Supersession{{ID: "b1", Attribute: "LIKES"}}, Insert: []memento.Memory{semantic("b2", "LIKES", "heist films, westerns", m2)}, Run: run(m2, "b2")},
		{Message: m3, Base: map[string]memento.MemoryBase{"LIKES": {ID: "b1", Value: "heist films"}}, Run: run(m3)},
	}
	_, err := bw.WriteMemoryBatch(ctx, ann, bad)
	wantCode(t, "WriteMemoryBatch with a stale base in its second write", err, memento.ECONFLICT)
	if _, err := st.MemoryRun(ctx, ann, "m2"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("the refused batch stored its first run (MemoryRun: %v)", err)
	}
	if got, _ := st.Memory(ctx, ann, "b1"); got == nil || got.ValidTo != nil {
		t.Errorf("the refused batch closed b1: %+v", got)
	}

	// A chain within the batch, after a message processed before.
	good := []memento.MemoryWrite{
		{Message: m1, Insert: []memento.Memory{semantic("b1x", "LIKES", "x", m1)}, Run: run(m1)},
		bad[0],
		{Message: m3, Base: map[string]memento.MemoryBase{"LIKES": {ID: "b2", Value: "heist films, westerns"}},
			Close: []memento.Supersession{{ID: "b2", Attribute: "LIKES"}}, Insert: []memento.Memory{semantic("b3", "LIKES", "heist films", m3)}, Run: run(m3, "b3")},
		{Message: m4, Insert: []memento.Memory{episode("b4", "WATCHED", "horror", m4)}, Run: run(m4, "b4")},
	}
	written, err := bw.WriteMemoryBatch(ctx, ann, good)
	if err != nil || !slices.Equal(written, []bool{false, true, true, true}) {
		t.Fatalf("WriteMemoryBatch = %v, %v; want the first (processed before) unwritten, the others written", written, err)
	}
	cur, err := st.Memories(ctx, ann, memento.MemoryFilter{Mode: memento.ModeSemantic})
	if err != nil || len(cur) != 1 || cur[0].ID != "b3" {
		t.Errorf("current semantic values = %+v, %v; want b3 alone", cur, err)
	}
	if b2, err := st.Memory(ctx, ann, "b2"); err != nil || b2.ValidTo == nil || !b2.ValidTo.Equal(m3.At) {
		t.Errorf("b2 = %+v, %v; want closed at m3's time", b2, err)
	}
	if _, err := st.Memory(ctx, ann, "b1x"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("the repeated run of m1 wrote its memory (Memory: %v)", err)
	}
}

// testMemoryBatchAsOneByOne checks that a batch leaves what its writes
// leave applied one after the other: the same memories, current and
// closed, in the same order, and the same keyword matches, for a batch
// that closes memories stored before it and memories its own earlier
// writes inserted. Then that each way a batch's order can make a close
// or an insert fail fails the whole batch with ECONFLICT.
func testMemoryBatchAsOneByOne(t *testing.T, open Opener) {
	st := open(t)
	bw, ok := st.(memento.MemoryBatchWriter)
	if !ok {
		t.Skip("the store does not implement memento.MemoryBatchWriter")
	}
	rs, _ := st.(memento.RecallStore)
	ctx := t.Context()
	texts := []string{"I like noir and speak English", "Heist films now", "Westerns too, no musicals",
		"Only westerns; horror musicals are worse", "I watched Heat again, and speak French now"}
	vec := func(i int) []float32 { return []float32{float32(i), 1} }
	// writes returns the batch over a user's messages m: the first is
	// stored before the batch, the others are the batch.
	writes := func(m []memento.Message) []memento.MemoryWrite {
		withVec := func(mem memento.Memory, i int) memento.Memory {
			mem.Vector, mem.Embedder = vec(i), "e"
			return mem
		}
		sup := func(id, attr string) memento.Supersession { return memento.Supersession{ID: id, Attribute: attr} }
		return []memento.MemoryWrite{
			{Message: m[0], Insert: []memento.Memory{semantic("p", "LIKES", "noir", m[0]), semantic("q", "LANGUAGE", "English", m[0])}, Run: run(m[0], "p", "q")},
			{Message: m[1], Base: map[string]memento.MemoryBase{"LIKES": {ID: "p", Value: "noir"}}, Close: []memento.Supersession{sup("p", "LIKES")},
				Insert: []memento.Memory{withVec(semantic("l1", "LIKES", "heist films", m[1]), 1), withVec(episode("e1", "WATCHED", "Heat", m[1]), 2)},
				Run:    run(m[1], "l1", "e1"), Vector: vec(1), Embedder: "e"},
			{Message: m[2], Base: map[string]memento.MemoryBase{"LIKES": {ID: "l1", Value: "heist films"}}, Close: []memento.Supersession{sup("l1", "LIKES")},
				Insert: []memento.Memory{semantic("l2", "LIKES", "heist films, westerns", m[2]), semantic("d1", "DISLIKES", "musicals", m[2])},
				Run:    run(m[2], "l2", "d1"), Vector: vec(2), Embedder: "e"},
			{Message: m[3], Close: []memento.Supersession{sup("l2", "LIKES"), sup("d1", "DISLIKES")},
				Insert: []memento.Memory{withVec(semantic("l3", "LIKES", "westerns", m[3]), 3), semantic("d2", "DISLIKES", "horror musicals", m[3])},
				Run:    run(m[3], "l3", "d2")},
			{Message: m[4], Base: map[string]memento.MemoryBase{"LANGUAGE": {ID: "q", Value: "English"}}, Close: []memento.Supersession{sup("e1", "WATCHED"), sup("q", "LANGUAGE")},
				Insert: []memento.Memory{episode("e2", "WATCHED", "Heat, again", m[4]), semantic("q2", "LANGUAGE", "French", m[4])},
				Run:    run(m[4], "e2", "q2"), Vector: vec(4), Embedder: "e"},
		}
	}
	messages := func(s memento.Scope) []memento.Message {
		var m []memento.Message
		for i, text := range texts {
			m = append(m, userMessage(t, st, s, "t1", fmt.Sprintf("m%d", i), text, i))
		}
		return m
	}
	annWrites, bobWrites := writes(messages(ann)), writes(messages(bob))
	writeOK(t, st, ann, annWrites[0])
	written, err := bw.WriteMemoryBatch(ctx, ann, annWrites[1:])
	if err != nil || !slices.Equal(written, []bool{true, true, true, true}) {
		t.Fatalf("WriteMemoryBatch = %v, %v; want every write written", written, err)
	}
	for _, w := range bobWrites {
		writeOK(t, st, bob, w)
	}
	stored := func(s memento.Scope) []memento.Memory {
		t.Helper()
		mems, err := st.Memories(ctx, s, memento.MemoryFilter{All: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range mems {
			mems[i].CreatedAt, mems[i].UpdatedAt = time.Time{}, time.Time{}
		}
		return mems
	}
	batched, oneByOne := stored(ann), stored(bob)
	if diff := cmp.Diff(oneByOne, batched); diff != "" {
		t.Errorf("memories after the batch differ from the writes one by one (-one by one +batch):\n%s", diff)
	}
	closed := 0
	for _, m := range batched {
		if m.ValidTo != nil {
			closed++
		}
	}
	if len(batched) != 10 || closed != 6 {
		t.Errorf("the batch left %d memories, %d closed; want 10, 6 closed (p, q, l1, l2, d1, e1)", len(batched), closed)
	}
	if rs != nil {
		for _, q := range []string{"heist films", "westerns", "musicals", "Heat", "noir", "English French"} {
			match := func(s memento.Scope) []string {
				t.Helper()
				cands, err := rs.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: q, Keyword: 20})
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, c := range cands {
					out = append(out, fmt.Sprintf("%s %.4f", c.ID, c.BM25))
				}
				slices.Sort(out)
				return out
			}
			if a, b := match(ann), match(bob); !slices.Equal(a, b) {
				t.Errorf("keyword matches of %q: %v after the batch, %v one by one", q, a, b)
			}
		}
	}

	// Each batch below fails as a whole: nothing of its first write is
	// stored and l3 stays current.
	m := []memento.Message{userMessage(t, st, ann, "t1", "m5", "Comedies", 5), userMessage(t, st, ann, "t1", "m6", "Dramas", 6),
		userMessage(t, st, ann, "t1", "m7", "Cartoons", 7)}
	likes := func(id string, i int, closes ...string) memento.MemoryWrite {
		w := memento.MemoryWrite{Message: m[i], Insert: []memento.Memory{semantic(id, "LIKES", m[i].Text, m[i])}, Run: run(m[i], id)}
		for _, c := range closes {
			w.Close = append(w.Close, memento.Supersession{ID: c, Attribute: "LIKES"})
		}
		return w
	}
	for _, tc := range []struct {
		name string
		ws   []memento.MemoryWrite
	}{
		{"two writes close one stored memory", []memento.MemoryWrite{likes("l4", 0, "l3"),
			{Message: m[1], Close: []memento.Supersession{{ID: "l3", Attribute: "LIKES"}}, Run: run(m[1])}}},
		{"a write closes a memory it inserts", []memento.MemoryWrite{likes("l4", 0, "l3", "l4")}},
		{"a write closes a memory the batch closed", []memento.MemoryWrite{likes("l4", 0, "l3"), likes("l5", 1, "l4"), likes("l6", 2, "l4")}},
		{"a second current value of an attribute", []memento.MemoryWrite{likes("l4", 0, "l3"), likes("l5", 1)}},
		{"a second current value beside a stored one", []memento.MemoryWrite{likes("l4", 0)}},
		{"a stored memory closed already", []memento.MemoryWrite{{Message: m[0], Close: []memento.Supersession{{ID: "d1", Attribute: "DISLIKES"}}, Run: run(m[0])}}},
		{"an id twice", []memento.MemoryWrite{likes("l4", 0, "l3"), {Message: m[1], Insert: []memento.Memory{episode("l4", "WATCHED", "Up", m[1])}, Run: run(m[1], "l4")}}},
		{"the id of a stored memory", []memento.MemoryWrite{{Message: m[0], Insert: []memento.Memory{episode("e1", "WATCHED", "Up", m[0])}, Run: run(m[0], "e1")}}},
	} {
		_, err := bw.WriteMemoryBatch(ctx, ann, tc.ws)
		wantCode(t, "WriteMemoryBatch: "+tc.name, err, memento.ECONFLICT)
		if _, err := st.MemoryRun(ctx, ann, "m5"); memento.ErrorCode(err) != memento.ENOTFOUND {
			t.Errorf("%s: the refused batch stored its first run (MemoryRun: %v)", tc.name, err)
		}
		if diff := cmp.Diff(batched, stored(ann)); diff != "" {
			t.Errorf("%s: the refused batch changed the memories:\n%s", tc.name, diff)
		}
	}
}
