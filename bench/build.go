package bench

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/memento-ai/memento"
)

// batchRows is about how many rows one bulk transaction writes.
const batchRows = 40000

// build loads the background and measured users into the store: workers
// generate and embed users in parallel, one writer stores them in bulk
// transactions of about batchRows rows, the rows of a batch's users
// interleaved in time order as a live store would have them. Measured
// users are spread evenly among the background ones.
func build(ctx context.Context, d Deps, cfg Config, v *Vocab) (*Scale, error) {
	type job struct {
		i        int
		scope    memento.Scope
		memories int
	}
	var jobs []job
	total := cfg.Users + cfg.MeasuredUsers
	every := 0
	if cfg.MeasuredUsers > 0 {
		every = max(1, total/cfg.MeasuredUsers)
	}
	b, m := 0, 0
	for i := 0; i < total; i++ {
		if m < cfg.MeasuredUsers && (every == 0 || i%every == every/2 || total-i <= cfg.MeasuredUsers-m) {
			jobs = append(jobs, job{i, memento.Scope{Tenant: d.Tenant, User: measuredUser(m)}, cfg.MeasuredMemories})
			m++
		} else {
			jobs = append(jobs, job{i, memento.Scope{Tenant: d.Tenant, User: backgroundUser(b)}, cfg.Memories})
			b++
		}
	}
	scale := &Scale{Users: total, BackgroundUsers: cfg.Users, BackgroundMemories: cfg.Memories,
		MeasuredUsers: cfg.MeasuredUsers, MeasuredMemories: cfg.MeasuredMemories}
	if total == 0 {
		return scale, nil
	}
	var bar *progressbar.ProgressBar
	if cfg.Progress != nil {
		bar = progressbar.NewOptions64(int64(cfg.Users*cfg.Memories+cfg.MeasuredUsers*cfg.MeasuredMemories),
			progressbar.OptionSetWriter(cfg.Progress),
			progressbar.OptionSetDescription("building the store (memories)"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("memories"),
			progressbar.OptionThrottle(250*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(cfg.Progress) }),
		)
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Users are generated in parallel and written in their order, so the
	// store is the same whatever the timing.
	workers := max(1, runtime.GOMAXPROCS(0))
	in := make(chan job)
	type done struct {
		i   int
		u   UserData
		err error
	}
	out := make(chan done, 4*workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				u := v.GenerateUser(j.scope, j.memories, cfg.Seed*1_000_003+uint64(j.i), cfg.End)
				err := embedUser(ctx, d.Embedder, &u)
				select {
				case out <- done{j.i, u, err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(in)
		for _, j := range jobs {
			select {
			case in <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()

	pending := map[int]UserData{}
	next := 0
	var batch []UserData
	rows := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := writeBatch(ctx, d.Bulk, batch, scale); err != nil {
			return err
		}
		if bar != nil {
			n := 0
			for _, u := range batch {
				n += len(u.Memories)
			}
			_ = bar.Add(n)
		}
		batch, rows = batch[:0], 0
		return nil
	}
	for r := range out {
		if r.err != nil {
			return nil, r.err
		}
		pending[r.i] = r.u
		for {
			u, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			batch = append(batch, u)
			rows += userRows(u)
			if rows >= batchRows {
				if err := flush(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if bar != nil {
		_ = bar.Finish()
	}
	scale.BuildSeconds = round3(time.Since(start).Seconds())
	return scale, nil
}

// embedUser embeds the user's messages, memories and preferences.
func embedUser(ctx context.Context, e memento.Embedder, u *UserData) error {
	var texts []string
	for _, th := range u.Threads {
		for _, m := range th.Messages {
			if m.Role == memento.RoleUser {
				texts = append(texts, m.Text)
			}
		}
	}
	for _, m := range u.Memories {
		texts = append(texts, m.Value)
	}
	for _, p := range u.Preferences {
		texts = append(texts, p.Concept)
	}
	vecs, err := embedAll(ctx, e, texts)
	if err != nil {
		return err
	}
	id := e.ID()
	k := 0
	for t := range u.Threads {
		th := &u.Threads[t]
		th.Vectors = make([][]float32, len(th.Messages))
		for i, m := range th.Messages {
			if m.Role == memento.RoleUser {
				th.Vectors[i] = vecs[k]
				k++
			}
		}
	}
	for i := range u.Memories {
		u.Memories[i].Vector, u.Memories[i].Embedder = vecs[k], id
		k++
	}
	for i := range u.Preferences {
		u.Preferences[i].Vector, u.Preferences[i].Embedder = vecs[k], id
		k++
	}
	return nil
}

// userRows counts the rows a user writes.
func userRows(u UserData) int {
	n := 2 + len(u.Threads) + len(u.Memories) + len(u.Runs) + len(u.Events) + len(u.Preferences)
	for _, th := range u.Threads {
		n += len(th.Messages) * 3 / 2
	}
	return n
}

// writeBatch writes the users of a batch in one transaction: users and
// threads first, then every user's messages in time order (with their
// vectors), then runs, memories, events and preferences.
func writeBatch(ctx context.Context, bulk func(context.Context, func(BulkWriter) error) error, users []UserData, scale *Scale) error {
	type msgRow struct {
		s   memento.Scope
		m   memento.Message
		vec []float32
	}
	var msgs []msgRow
	for _, u := range users {
		for _, th := range u.Threads {
			for i, m := range th.Messages {
				msgs = append(msgs, msgRow{u.Scope, m, th.Vectors[i]})
			}
		}
	}
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].m.At.Before(msgs[j].m.At) })
	var embedder string
	for _, u := range users {
		if len(u.Memories) > 0 {
			embedder = u.Memories[0].Embedder
			break
		}
	}
	err := bulk(ctx, func(b BulkWriter) error {
		for _, u := range users {
			if err := b.User(u.Scope); err != nil {
				return err
			}
			for _, th := range u.Threads {
				if err := b.Thread(u.Scope, th.ID, int64(len(th.Messages)), th.Updated); err != nil {
					return err
				}
			}
		}
		for _, r := range msgs {
			if err := b.Message(r.s, r.m, r.vec, embedder); err != nil {
				return err
			}
		}
		for _, u := range users {
			for _, r := range u.Runs {
				if err := b.Run(u.Scope, r); err != nil {
					return err
				}
			}
			for _, m := range u.Memories {
				if err := b.Memory(u.Scope, m); err != nil {
					return err
				}
			}
			for _, e := range u.Events {
				if err := b.Event(u.Scope, e); err != nil {
					return err
				}
			}
			for _, p := range u.Preferences {
				if err := b.Preference(u.Scope, p); err != nil {
					return err
				}
			}
		}
		if err := b.Flush(); err != nil {
			return err
		}
		scale.Rows += int64(b.Rows())
		return nil
	})
	if err != nil {
		return fmt.Errorf("build store: %w", err)
	}
	for _, u := range users {
		scale.Memories += int64(len(u.Memories))
		scale.Events += int64(len(u.Events))
		scale.Preferences += int64(len(u.Preferences))
		for _, th := range u.Threads {
			scale.Messages += int64(len(th.Messages))
		}
	}
	return nil
}
