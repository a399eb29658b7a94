package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/atomicfile"
	"github.com/memento-ai/memento/profile"
)

// MigrateOptions tune Migrate.
type MigrateOptions struct {
	// Checkpoint is a file that records the users already copied, so a
	// run that stopped (a crash, ^C, a lost connection) goes on where it
	// was rather than from the start. Empty keeps no checkpoint; every
	// run then copies every user again, which is correct (rows already
	// in the target are skipped by id) but slower.
	Checkpoint string
	// RecallSample is how many users' recall answers are compared between
	// the two stores after the copy (0: none).
	RecallSample int
	// Parallel is how many users are copied at once (default 1). Users
	// are independent, so a PostgreSQL target, which takes writes on many
	// connections, copies faster with a few.
	Parallel int
	// Progress, when set, is called after each user with how many users
	// are done of all, one call at a time.
	Progress func(done, total int)
}

// MigrateReport is what Migrate did and found; `memento migrate --json`
// prints it.
type MigrateReport struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	Tenants []string `json:"tenants"`
	Users   int      `json:"users"`
	// Resumed counts the users a checkpoint said were copied by an
	// earlier run; they are verified, not copied again.
	Resumed int                  `json:"resumed"`
	Copied  memento.ImportResult `json:"copied"`
	Titles  int                  `json:"titles"`
	Keys    int                  `json:"keys"`
	Models  int                  `json:"models"`
	// ModelsLeft names the learned models not copied because they were
	// older than the source's events; the target's workers learn them
	// again.
	ModelsLeft []string `json:"modelsLeft,omitempty"`
	// Source and Target count, per kind, what each store holds of the
	// migrated users once the copy ended; Verified is true when every
	// user's counts are equal.
	Source     MigrateCounts `json:"source"`
	Target     MigrateCounts `json:"target"`
	Verified   bool          `json:"verified"`
	Mismatches []string      `json:"mismatches,omitempty"`
	// Recall compares the recall answers of both stores for a sample of
	// users and queries.
	Recall  RecallCheck `json:"recall"`
	Seconds float64     `json:"seconds"`

	remaining int // users not yet copied or resumed, for the progress
}

// MigrateCounts counts the rows of users in one store.
type MigrateCounts struct {
	Users     int `json:"users"`
	Threads   int `json:"threads"`
	Messages  int `json:"messages"`
	Summaries int `json:"summaries"`
	Events    int `json:"events"`
	Memories  int `json:"memories"`
	Runs      int `json:"runs"`
}

// RecallCheck is the comparison of recall answers between two stores.
type RecallCheck struct {
	Queries   int      `json:"queries"`
	Identical int      `json:"identical"`
	Differ    []string `json:"differ,omitempty"`
}

// migrateCheckpoint is the checkpoint file's content.
type migrateCheckpoint struct {
	From string              `json:"from"`
	To   string              `json:"to"`
	Done map[string][]string `json:"done"` // tenant → users copied
}

// Migrate copies everything from one engine's store into another's: the
// imported catalog, API keys (with their hashes, so clients' keys go on
// working), every user of every tenant through the one export document
// (threads with their summaries, answers and shown titles, messages,
// events, memories with their history and provenance, pipeline runs,
// modes, the profile and the preferences), the learned models that are up
// to date with their events, and the recall vectors (computed by the
// target's embedder). It then counts each user's rows in both stores and
// compares recall answers for a sample of users.
//
// The source must be at rest: Migrate refuses while its queue holds
// unfinished jobs, since their results would not be copied. Rows already
// in the target are skipped by id, so Migrate may run again after a stop;
// with a checkpoint it skips the users already copied. Errors: EINVALID
// for a busy source or a checkpoint of other stores; the stores' errors.
func Migrate(ctx context.Context, from, to *Engine, opts MigrateOptions) (*MigrateReport, error) {
	start := time.Now()
	rep := &MigrateReport{From: RedactURL(from.Config.DB), To: RedactURL(to.Config.DB)}
	if n, err := from.Store.Unfinished(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		return nil, memento.Errorf(memento.EINVALID, "the source has %d unfinished background jobs, whose memories would not be copied: run `memento serve --db %s` until `memento jobs stats` shows none waiting or running, then migrate", n, rep.From)
	}
	cp, err := loadCheckpoint(opts.Checkpoint, rep.From, rep.To)
	if err != nil {
		return nil, err
	}
	if err := migrateTitles(ctx, from.Store, to.Store, rep); err != nil {
		return nil, err
	}
	if err := migrateKeys(ctx, from.Store, to.Store, rep); err != nil {
		return nil, err
	}
	tenants, err := listTenants(ctx, from.Store)
	if err != nil {
		return nil, err
	}
	rep.Tenants = tenants
	users := map[string][]string{}
	total := 0
	for _, t := range tenants {
		us, err := from.Store.Users(ctx, t)
		if err != nil {
			return nil, err
		}
		users[t] = us
		total += len(us)
	}
	rep.Users, rep.remaining = total, total
	for _, t := range tenants {
		if err := migrateTenant(ctx, from, to, t, users[t], cp, opts, total, rep); err != nil {
			return nil, err
		}
		if err := migrateModels(ctx, from.Store, to.Store, t, rep); err != nil {
			return nil, err
		}
	}
	// The copy came in by the service's writes, so fast that a server's
	// autovacuum has not analysed the tables yet (and never will where it
	// is off): the target's planner still plans for empty tables, for
	// the verification below and for the first requests served.
	if a, ok := to.Store.(interface{ Analyze(context.Context) error }); ok {
		if err := a.Analyze(ctx); err != nil {
			return nil, err
		}
	}
	if err := verifyMigration(ctx, from, to, users, tenants, rep); err != nil {
		return nil, err
	}
	if err := compareRecall(ctx, from, to, users, tenants, opts.RecallSample, rep); err != nil {
		return nil, err
	}
	rep.Verified = len(rep.Mismatches) == 0
	rep.Seconds = math.Round(time.Since(start).Seconds()*10) / 10
	return rep, nil
}

// migrateTenant copies a tenant's users that the checkpoint does not
// list, opts.Parallel at a time, and records each in the checkpoint.
func migrateTenant(ctx context.Context, from, to *Engine, tenant string, users []string, cp *migrateCheckpoint, opts MigrateOptions, total int, rep *MigrateReport) error {
	copied := map[string]bool{}
	for _, u := range cp.Done[tenant] {
		copied[u] = true
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu    sync.Mutex // guards rep, cp, saved and the progress calls
		saved = time.Now()
		work  = make(chan string)
		wg    sync.WaitGroup
	)
	progress := func() {
		if opts.Progress != nil {
			opts.Progress(rep.Users-rep.remaining, total)
		}
	}
	for range max(1, opts.Parallel) {
		wg.Go(func() {
			for u := range work {
				var sum memento.ImportResult
				if err := migrateUser(ctx, from, to, memento.Scope{Tenant: tenant, User: u}, &sum); err != nil {
					cancel(fmt.Errorf("copy user %s of tenant %s: %w", u, tenant, err))
					continue
				}
				mu.Lock()
				addImport(&rep.Copied, sum)
				cp.Done[tenant] = append(cp.Done[tenant], u)
				rep.remaining--
				var err error
				// A checkpoint a second is enough: a user copied twice
				// costs time, never a row (ids are skipped).
				if time.Since(saved) > time.Second {
					err, saved = cp.save(opts.Checkpoint), time.Now()
				}
				progress()
				mu.Unlock()
				if err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, u := range users {
		if copied[u] {
			mu.Lock()
			rep.Resumed++
			rep.remaining--
			progress()
			mu.Unlock()
			continue
		}
		select {
		case work <- u:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	// What was copied stays recorded, whatever stopped the copy.
	if err := context.Cause(ctx); err != nil {
		return errors.Join(err, cp.save(opts.Checkpoint))
	}
	return cp.save(opts.Checkpoint)
}

// migrateTitles copies the catalog imported into the source, when the
// target does not hold the same number of titles.
func migrateTitles(ctx context.Context, from, to Store, rep *MigrateReport) error {
	n, err := from.CountTitles(ctx)
	if err != nil || n == 0 {
		return err
	}
	if m, err := to.CountTitles(ctx); err != nil || m == n {
		return err
	}
	titles, err := from.Titles(ctx)
	if err != nil {
		return err
	}
	rep.Titles, err = to.PutTitles(ctx, titles, false)
	return err
}

// migrateKeys copies the API keys when both stores can.
func migrateKeys(ctx context.Context, from, to Store, rep *MigrateReport) error {
	src, ok1 := from.(memento.KeyCopier)
	dst, ok2 := to.(memento.KeyCopier)
	if !ok1 || !ok2 {
		has, err := from.HasKeys(ctx)
		if err != nil {
			return err
		}
		if has {
			return memento.Errorf(memento.EINVALID, "the source holds API keys, which these stores cannot copy (%T to %T)", from, to)
		}
		return nil
	}
	keys, err := src.ExportKeys(ctx)
	if err != nil || len(keys) == 0 {
		return err
	}
	rep.Keys, err = dst.ImportKeys(ctx, keys)
	return err
}

// listTenants lists the source's tenants, or the default one for a store
// that cannot list them.
func listTenants(ctx context.Context, st Store) ([]string, error) {
	tl, ok := st.(memento.TenantLister)
	if !ok {
		return []string{memento.DefaultTenant}, nil
	}
	return tl.Tenants(ctx)
}

// migrateUser copies one user through the one export document, then
// computes the recall vectors the target lacks.
func migrateUser(ctx context.Context, from, to *Engine, s memento.Scope, sum *memento.ImportResult) error {
	doc, err := memento.ExportUserDocument(ctx, from.Store, from.UserSections(), s)
	if err != nil {
		return err
	}
	res, err := memento.ImportUserDocument(ctx, to.Store, to.UserSections(), s, doc)
	if err != nil {
		return err
	}
	addImport(sum, *res)
	return copyVectors(ctx, from, to, s, doc)
}

// copyVectors gives the target's copy of a user the recall vectors the
// source has, computed again by the target's embedder (exact for the
// same embedder): the rows the source never embedded stay without, as a
// back-fill would leave them on either store until it ran, so that recall
// answers the same. A row without a vector still ranks by its words, and
// one with a vector also by its meaning, so embedding more than the
// source has would change the answers. The engine's own jobs embed every
// row they write, but a store written by another program, or by `memento
// bench` (which embeds the users' messages, not the agent's replies), may
// hold rows without. A source with no vector by this embedder at all
// (written with another one) gets every row embedded.
func copyVectors(ctx context.Context, from, to *Engine, s memento.Scope, doc *memento.UserExport) error {
	emb, err := to.Embedder(ctx)
	if err != nil {
		return err
	}
	rows := 1
	for _, m := range doc.Memories {
		if m.ValidTo == nil {
			rows++
		}
	}
	for _, th := range doc.Threads {
		rows += len(th.Messages)
	}
	srcMems, srcMsgs, err := from.Store.MissingVectors(ctx, s, emb.ID(), rows)
	if err != nil {
		return fmt.Errorf("list the source's rows without vectors: %w", err)
	}
	if len(srcMems)+len(srcMsgs) >= rows-1 {
		return to.Reindex(ctx, s)
	}
	skip := make(map[string]bool, len(srcMems)+len(srcMsgs))
	for _, t := range srcMems {
		skip["mem\x00"+t.ID] = true
	}
	for _, t := range srcMsgs {
		skip["msg\x00"+t.ID] = true
	}
	mems, msgs, err := to.Store.MissingVectors(ctx, s, emb.ID(), rows)
	if err != nil {
		return err
	}
	mems = slices.DeleteFunc(mems, func(t memento.VectorText) bool { return skip["mem\x00"+t.ID] })
	msgs = slices.DeleteFunc(msgs, func(t memento.VectorText) bool { return skip["msg\x00"+t.ID] })
	const batch = 256
	for len(mems)+len(msgs) > 0 {
		m, g := mems[:min(batch, len(mems))], msgs[:0]
		if len(m) < batch {
			g = msgs[:min(batch-len(m), len(msgs))]
		}
		if err := to.embed(ctx, s, emb, m, g); err != nil {
			return err
		}
		mems, msgs = mems[len(m):], msgs[len(g):]
	}
	return nil
}

func addImport(sum *memento.ImportResult, res memento.ImportResult) {
	sum.Threads += res.Threads
	sum.Messages += res.Messages
	sum.Summaries += res.Summaries
	sum.Events += res.Events
	sum.Memories += res.Memories
	sum.Runs += res.Runs
	sum.Answers += res.Answers
	sum.Skipped += res.Skipped
}

// migrateModels copies a tenant's learned models that are up to date
// with the source's events. The copy is marked as learned from the
// target's events, which are the same events once every user is copied.
func migrateModels(ctx context.Context, from, to Store, tenant string, rep *MigrateReport) error {
	for _, name := range []string{profile.ModelName} {
		m, err := from.ProfileModel(ctx, tenant, name)
		if err != nil || m == nil {
			if err != nil {
				return err
			}
			continue
		}
		mark, err := from.EventsMark(ctx, tenant)
		if err != nil {
			return err
		}
		if m.EventsMark != mark {
			rep.ModelsLeft = append(rep.ModelsLeft, tenant+"/"+name)
			continue
		}
		if m.EventsMark, err = to.EventsMark(ctx, tenant); err != nil {
			return err
		}
		if _, err := to.SaveProfileModel(ctx, *m, false); err != nil {
			return err
		}
		rep.Models++
	}
	return nil
}

// verifyMigration counts each user's rows in both stores.
func verifyMigration(ctx context.Context, from, to *Engine, users map[string][]string, tenants []string, rep *MigrateReport) error {
	for _, t := range tenants {
		for _, u := range users[t] {
			s := memento.Scope{Tenant: t, User: u}
			a, err := countUser(ctx, from.Store, s)
			if err != nil {
				return err
			}
			b, err := countUser(ctx, to.Store, s)
			if memento.ErrorCode(err) == memento.ENOTFOUND {
				rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("%s/%s: missing from the target", t, u))
				addCounts(&rep.Source, a)
				continue
			}
			if err != nil {
				return err
			}
			addCounts(&rep.Source, a)
			addCounts(&rep.Target, b)
			if a != b {
				rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("%s/%s: source %+v, target %+v", t, u, a, b))
			}
		}
	}
	return nil
}

// countUser counts what a store holds of one user.
func countUser(ctx context.Context, st Store, s memento.Scope) (MigrateCounts, error) {
	doc, err := st.ExportUser(ctx, s)
	if err != nil {
		return MigrateCounts{}, err
	}
	c := MigrateCounts{Users: 1, Threads: len(doc.Threads), Events: len(doc.Events), Memories: len(doc.Memories), Runs: len(doc.Runs)}
	for _, th := range doc.Threads {
		c.Messages += len(th.Messages)
		c.Summaries += len(th.Summaries)
	}
	return c, nil
}

func addCounts(sum *MigrateCounts, c MigrateCounts) {
	sum.Users += c.Users
	sum.Threads += c.Threads
	sum.Messages += c.Messages
	sum.Summaries += c.Summaries
	sum.Events += c.Events
	sum.Memories += c.Memories
	sum.Runs += c.Runs
}

// compareRecall asks both stores' recall the same questions, drawn from
// the users' own memories and messages, at one fixed time, and compares
// the items, in order, and their scores.
func compareRecall(ctx context.Context, from, to *Engine, users map[string][]string, tenants []string, sample int, rep *MigrateReport) error {
	if sample <= 0 {
		return nil
	}
	var scopes []memento.Scope
	for _, t := range tenants {
		for _, u := range users[t] {
			scopes = append(scopes, memento.Scope{Tenant: t, User: u})
		}
	}
	// An even spread over the users, the same every run.
	step := max(1, len(scopes)/sample)
	fa, err := from.Assembler(ctx)
	if err != nil {
		return err
	}
	ta, err := to.Assembler(ctx)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := 0; i < len(scopes) && rep.Recall.Queries < sample; i += step {
		s := scopes[i]
		queries, err := recallQueries(ctx, from.Store, s)
		if err != nil {
			return err
		}
		for _, q := range queries {
			rq := memento.RecallQuery{Scope: s, Query: q, K: 10, Now: now}
			a, err := fa.Recall(ctx, rq)
			if err != nil {
				return err
			}
			b, err := ta.Recall(ctx, rq)
			if err != nil {
				return err
			}
			rep.Recall.Queries++
			if sameRecall(a, b) {
				rep.Recall.Identical++
			} else {
				rep.Recall.Differ = append(rep.Recall.Differ, fmt.Sprintf("%s/%s %q: %s against %s", s.Tenant, s.User, q, recallIDs(a), recallIDs(b)))
			}
		}
	}
	if len(rep.Recall.Differ) > 0 {
		rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("recall differs for %d of %d queries", len(rep.Recall.Differ), rep.Recall.Queries))
	}
	return nil
}

// recallQueries are a user's questions for the comparison: the value of
// their newest memory and the text of their first message.
func recallQueries(ctx context.Context, st Store, s memento.Scope) ([]string, error) {
	var out []string
	mems, err := st.Memories(ctx, s, memento.MemoryFilter{})
	if err != nil {
		return nil, err
	}
	if len(mems) > 0 {
		sort.Slice(mems, func(i, j int) bool { return mems[i].CreatedAt.After(mems[j].CreatedAt) })
		out = append(out, mems[0].Value)
	}
	doc, err := st.ExportUser(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, th := range doc.Threads {
		if len(th.Messages) > 0 {
			out = append(out, th.Messages[0].Text)
			break
		}
	}
	return out, nil
}

// sameRecall reports whether two answers hold the same items in the same
// order with the same scores (to 1e-6: the stores keep times and vectors
// to different precisions).
func sameRecall(a, b []memento.RecallItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || math.Abs(a[i].Score-b[i].Score) > 1e-6 {
			return false
		}
	}
	return true
}

func recallIDs(items []memento.RecallItem) string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return fmt.Sprint(ids)
}

// loadCheckpoint reads the checkpoint file, or starts one. A checkpoint
// of other stores is refused rather than trusted.
func loadCheckpoint(path, from, to string) (*migrateCheckpoint, error) {
	cp := &migrateCheckpoint{From: from, To: to, Done: map[string][]string{}}
	if path == "" {
		return cp, nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return cp, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	var got migrateCheckpoint
	if err := json.Unmarshal(data, &got); err != nil {
		return nil, memento.Errorf(memento.EINVALID, "checkpoint %s is not a migrate checkpoint: %v; delete it to start over", path, err)
	}
	if got.From != from || got.To != to {
		return nil, memento.Errorf(memento.EINVALID, "checkpoint %s is of a copy from %s to %s, not from %s to %s; name another --checkpoint or delete it", path, got.From, got.To, from, to)
	}
	if got.Done == nil {
		got.Done = map[string][]string{}
	}
	return &got, nil
}

// save writes the checkpoint through a temporary file and a rename, so a
// crash leaves the old checkpoint or the new one, never half of one.
func (cp *migrateCheckpoint) save(path string) error {
	if path == "" {
		return nil
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}
