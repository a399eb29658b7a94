package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/hygiene"
	"github.com/memento-ai/memento/recall"
)

// memoryRoutes are the dependencies of the attribute-memory HTTP routes.
func memoryRoutes(ctx context.Context, a *engine.Engine) mhttp.MemoryRoutes {
	asm, err := a.Assembler(ctx)
	if err != nil {
		a.Logger.Warn("context assembly is off", "err", err)
	}
	emotion, err := a.EmotionClassifier(ctx)
	if err != nil {
		a.Logger.Warn("emotion tagging of appended messages is off", "err", err)
	}
	return mhttp.MemoryRoutes{Store: a.Store, Assembler: asm, JobsFor: a.MessageJobs, Reindex: a.Reindex, Sections: a.UserSections(), Emotion: emotion}
}

// ingestLine is one line of `memento ingest` in the JSON-lines format.
type ingestLine struct {
	ID     string    `json:"id"`
	User   string    `json:"user"`
	Thread string    `json:"thread"`
	Role   string    `json:"role"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
}

// IngestResult is what `memento ingest --json` prints: the messages read,
// and of those, how many the pipeline processed and how many have a
// failed job (a dead letter).
type IngestResult struct {
	Messages  int `json:"messages"`
	Processed int `json:"processed"`
	Failed    int `json:"failed"`
}

// ingestBatch is the messages of one thread of one user, in file order.
type ingestBatch struct {
	user, thread string
	msgs         []memento.Message
}

func (m *Main) ingestCommand() *cobra.Command {
	var format, user, mode string
	var wait, asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "ingest FILE",
		Short: "Append messages to the message log, optionally waiting for the memory pipeline",
		Long: `Ingest appends messages to the message log, each with its background jobs (the
attribute pipeline and the other memories) in the same transaction.

Formats:
  jsonl   one JSON object a line: {"id","user","thread","role","text","at"}; role is
          user (the default) or assistant; ids make a repeated ingest change nothing
  locomo  LoCoMo conversations (a file, or a folder of *.json): each conversation is a
          user (--user, or locomo-<file name>), each session a thread, every turn of
          both speakers a user message with its dia_id as id, prefixed with the
          speaker's name and stamped with its session's date

--wait runs the background workers in this process and returns when every job has
ended, then counts the messages the pipeline processed and those whose job failed.
--mode overrides every attribute's mode for the ingested users (for experiments).`,
		Example: "  memento ingest chats.jsonl --wait --json\n  memento ingest ../shared/data/locomo/26.json --format locomo --mode episodic --wait",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if mode != "" && !memento.ValidMode(mode) {
				return memento.Errorf(memento.EINVALID, "--mode must be %s or %s, got %q", memento.ModeSemantic, memento.ModeEpisodic, mode)
			}
			var batches []ingestBatch
			var err error
			switch format {
			case "jsonl":
				batches, err = readIngestJSONL(m.Stdin, args[0], user)
			case "locomo":
				batches, err = readIngestLoCoMo(args[0], user)
			default:
				return memento.Errorf(memento.EINVALID, "--format must be jsonl or locomo, got %q", format)
			}
			if err != nil {
				return err
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			if mode != "" {
				for _, u := range batchUsers(batches) {
					if err := app.Store.SetMemoryMode(ctx, app.Scope(u), "*", mode); err != nil {
						return err
					}
				}
			}
			if wait {
				// Workers first: jobs start as soon as they are durable.
				if err := app.StartWorkers(ctx); err != nil {
					return err
				}
			}
			res := IngestResult{}
			inserted, dups := 0, 0
			for _, b := range batches {
				s := app.Scope(b.user)
				r, err := app.Store.AppendMessages(ctx, s, b.thread, b.msgs, func(msg memento.Message) []memento.JobRequest {
					return app.MessageJobs(s, b.thread, msg)
				})
				if err != nil {
					return fmt.Errorf("ingest %s/%s: %w", b.user, b.thread, err)
				}
				res.Messages += len(b.msgs)
				inserted += r.Inserted
				dups += r.Duplicates
			}
			if wait {
				if err := app.WaitForJobs(ctx, timeout); err != nil {
					return err
				}
			}
			if err := countIngested(ctx, app, batches, &res); err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			fmt.Fprintf(m.Stdout, "%d messages (%d new, %d already stored), %d processed by the pipeline, %d failed\n",
				res.Messages, inserted, dups, res.Processed, res.Failed)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "input format: jsonl or locomo")
	cmd.Flags().StringVar(&user, "user", "", "user of every message (jsonl: lines without a user; locomo: every conversation)")
	cmd.Flags().StringVar(&mode, "mode", "", "override every attribute's mode for the ingested users: semantic or episodic")
	cmd.Flags().BoolVar(&wait, "wait", false, "run the workers and return once every job has ended")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "with --wait, give up after this long")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"messages","processed","failed"} as JSON`)
	return cmd
}

// readIngestJSONL reads JSON lines into batches by user and thread, in
// the order threads first appear.
func readIngestJSONL(stdin io.Reader, name, defaultUser string) ([]ingestBatch, error) {
	in, closeIn, err := openInput(stdin, name)
	if err != nil {
		return nil, memento.Errorf(memento.EINVALID, "ingest: %v", err)
	}
	defer closeIn()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	var batches []ingestBatch
	index := map[[2]string]int{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var l ingestLine
		if err := dec.Decode(&l); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "%s:%d: %v", name, n, err)
		}
		if l.User == "" {
			l.User = defaultUser
		}
		switch {
		case l.User == "":
			return nil, memento.Errorf(memento.EINVALID, "%s:%d: user is required (or give --user)", name, n)
		case l.Thread == "":
			return nil, memento.Errorf(memento.EINVALID, "%s:%d: thread is required", name, n)
		case strings.TrimSpace(l.Text) == "":
			return nil, memento.Errorf(memento.EINVALID, "%s:%d: text must not be empty", name, n)
		}
		for _, err := range []error{memento.CheckID("user", l.User), memento.CheckID("thread", l.Thread),
			memento.CheckOptionalID("id", l.ID), memento.CheckTime("at", l.At)} {
			if err != nil {
				return nil, memento.Errorf(memento.EINVALID, "%s:%d: %s", name, n, memento.ErrorMessage(err))
			}
		}
		role := memento.Role(l.Role)
		if role == "" {
			role = memento.RoleUser
		}
		if !role.Valid() {
			return nil, memento.Errorf(memento.EINVALID, "%s:%d: role must be user or assistant, got %q", name, n, l.Role)
		}
		key := [2]string{l.User, l.Thread}
		i, ok := index[key]
		if !ok {
			i = len(batches)
			index[key] = i
			batches = append(batches, ingestBatch{user: l.User, thread: l.Thread})
		}
		batches[i].msgs = append(batches[i].msgs, memento.Message{ID: l.ID, Role: role, Text: l.Text, At: l.At})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ingest %s: %w", name, err)
	}
	return batches, nil
}

// readIngestLoCoMo reads a LoCoMo conversation file, or every *.json file
// of a folder, into batches: one user per conversation, one thread per
// session.
func readIngestLoCoMo(path, user string) ([]ingestBatch, error) {
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return nil, memento.Errorf(memento.EINVALID, "ingest: %v", err)
	} else if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.json"))
		if err != nil || len(files) == 0 {
			return nil, memento.Errorf(memento.EINVALID, "ingest: no *.json file in %s", path)
		}
		sort.Strings(files)
		if user != "" && len(files) > 1 {
			return nil, memento.Errorf(memento.EINVALID, "--user names one user, but %s holds %d conversations", path, len(files))
		}
	}
	var batches []ingestBatch
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, memento.Errorf(memento.EINVALID, "ingest: %v", err)
		}
		c, err := recall.ReadLoCoMo(r)
		r.Close()
		if err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "%s: %s", f, memento.ErrorMessage(err))
		}
		u := user
		if u == "" {
			u = "locomo-" + strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		}
		index := map[string]int{}
		for _, msg := range c.Messages() {
			i, ok := index[msg.Thread]
			if !ok {
				i = len(batches)
				index[msg.Thread] = i
				batches = append(batches, ingestBatch{user: u, thread: msg.Thread})
			}
			batches[i].msgs = append(batches[i].msgs, msg)
		}
	}
	return batches, nil
}

func batchUsers(batches []ingestBatch) []string {
	seen := map[string]bool{}
	var users []string
	for _, b := range batches {
		if !seen[b.user] {
			seen[b.user] = true
			users = append(users, b.user)
		}
	}
	return users
}

// countIngested counts the ingested messages with a recorded pipeline run
// and those whose remember job failed.
func countIngested(ctx context.Context, app *engine.Engine, batches []ingestBatch, res *IngestResult) error {
	failed := map[[2]string]bool{}
	jobs, err := app.Store.Jobs(ctx, memento.JobFilter{Kind: memento.JobRemember, State: memento.JobFailed})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		var p memento.MessageJob
		if json.Unmarshal(j.Payload, &p) == nil {
			failed[[2]string{p.User, p.Message}] = true
		}
	}
	for _, b := range batches {
		s := app.Scope(b.user)
		for _, msg := range b.msgs {
			if msg.ID == "" {
				continue // a generated id is not known here
			}
			done, err := app.Store.MemoryProcessed(ctx, s, msg.ID)
			if err != nil {
				return err
			}
			if done {
				res.Processed++
			} else if failed[[2]string{b.user, msg.ID}] {
				res.Failed++
			}
		}
	}
	return nil
}

// memoryLine is a memory as `memories list --json` prints it.
type memoryLine struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Attribute string     `json:"attribute"`
	Mode      string     `json:"mode"`
	Value     string     `json:"value"`
	ValidFrom time.Time  `json:"validFrom"`
	ValidTo   *time.Time `json:"validTo"`
	Sources   []string   `json:"sources"`
}

func toLines(mems []memento.Memory) []memoryLine {
	out := make([]memoryLine, len(mems))
	for i, m := range mems {
		out[i] = memoryLine{ID: m.ID, Kind: m.Kind, Attribute: m.Attribute, Mode: m.Mode, Value: m.Value, ValidFrom: m.ValidFrom, ValidTo: m.ValidTo, Sources: m.Sources}
	}
	return out
}

// forUser is the preamble of a subcommand that acts on one user: it opens
// the app on the existing store and hands run the scope of *user, the
// value of its --user flag.
func (m *Main) forUser(user *string, run func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		app, err := m.ExistingApp(cmd.Context())
		if err != nil {
			return err
		}
		return run(cmd, app, app.Scope(*user), args)
	}
}

func (m *Main) memoriesCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "memories", Short: "Read and edit what the attribute memory knows about a user"}
	var user string
	var asJSON bool
	cmd.PersistentFlags().StringVar(&user, "user", "", "user id (required)")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkPersistentFlagRequired("user")
	printMemories := func(mems []memento.Memory) error {
		if asJSON {
			return json.NewEncoder(m.Stdout).Encode(toLines(mems))
		}
		w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tATTRIBUTE\tMODE\tVALID FROM\tVALID TO\tVALUE\tSOURCES")
		for _, mem := range mems {
			to := "current"
			if mem.ValidTo != nil {
				to = mem.ValidTo.Format("2006-01-02 15:04")
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mem.ID, mem.Attribute, mem.Mode, mem.ValidFrom.Format("2006-01-02 15:04"), to, mem.Value, strings.Join(mem.Sources, ","))
		}
		return w.Flush()
	}

	var f memento.MemoryFilter
	list := &cobra.Command{
		Use:   "list",
		Short: "List a user's current memories (--all: with superseded values)",
		Args:  cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			mems, err := app.Store.Memories(cmd.Context(), s, f)
			if err != nil {
				return err
			}
			return printMemories(mems)
		}),
	}
	list.Flags().BoolVar(&f.All, "all", false, "include superseded values")
	list.Flags().StringVar(&f.Kind, "kind", "", "only attribute (semantic values) or episode memories")
	list.Flags().StringVar(&f.Attribute, "attribute", "", "only this attribute")

	history := &cobra.Command{
		Use:   "history ID",
		Short: "List every version of a memory's attribute value, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, args []string) error {
			mems, err := app.Store.MemoryHistory(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			return printMemories(mems)
		}),
	}

	var attr, mode string
	modeCmd := &cobra.Command{
		Use:   "mode",
		Short: "Override the mode of an attribute (or of all: --attribute '*') for a user",
		Long:  "Override whether an attribute is remembered as one consolidated value (semantic) or statement by statement (episodic) for one user, for experiments. --mode '' removes the override. Without --mode, list the overrides.",
		Args:  cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			if cmd.Flags().Changed("mode") {
				if err := app.Store.SetMemoryMode(cmd.Context(), s, attr, mode); err != nil {
					return err
				}
			}
			modes, err := app.Store.MemoryModes(cmd.Context(), s)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(modes)
			}
			keys := make([]string, 0, len(modes))
			for k := range modes {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(m.Stdout, "%s\t%s\n", k, modes[k])
			}
			return nil
		}),
	}
	modeCmd.Flags().StringVar(&attr, "attribute", "*", "attribute name, or * for every attribute")
	modeCmd.Flags().StringVar(&mode, "mode", "", "semantic or episodic; empty removes the override")

	var message string
	var limit int
	runs := &cobra.Command{
		Use:   "runs",
		Short: "Show the pipeline's runs over a user's messages, with their traces",
		Args:  cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			var list []memento.MemoryRun
			if message != "" {
				r, err := app.Store.MemoryRun(cmd.Context(), s, message)
				if err != nil {
					return err
				}
				list = []memento.MemoryRun{*r}
			} else {
				runs, err := app.Store.MemoryRuns(cmd.Context(), s, limit)
				if err != nil {
					return err
				}
				list = runs
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(list)
			}
			for _, r := range list {
				fmt.Fprintf(m.Stdout, "%s  %s  %s\n", r.Message, r.Outcome, r.Reason)
				for _, st := range r.Steps {
					fmt.Fprintf(m.Stdout, "    %-18s %-10s %8s  %s\n", st.Node, st.Outcome, st.Duration.Round(time.Microsecond), st.Detail)
				}
			}
			return nil
		}),
	}
	runs.Flags().StringVar(&message, "message", "", "only the run over this message")
	runs.Flags().IntVar(&limit, "limit", 20, "at most this many runs, newest first")

	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Forget a memory (and, for a semantic value, the versions it superseded)",
		Args:  cobra.ExactArgs(1),
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, args []string) error {
			return app.Store.DeleteMemory(cmd.Context(), s, args[0])
		}),
	}

	export := &cobra.Command{
		Use:   "export",
		Short: "Print everything Memento keeps about a user as one JSON document",
		Args:  cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			// The document of GET .../export: with the profile and the
			// preferences.
			doc, err := memento.ExportUserDocument(cmd.Context(), app.Store, app.UserSections(), s)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(m.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(doc)
		}),
	}

	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Import a user export (FILE, or - for standard input) under --user",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, closeIn, err := openInput(m.Stdin, args[0])
			if err != nil {
				return memento.Errorf(memento.EINVALID, "import: %v", err)
			}
			defer closeIn()
			var doc memento.UserExport
			if err := json.NewDecoder(in).Decode(&doc); err != nil {
				return memento.Errorf(memento.EINVALID, "import %s: not an export document: %v", args[0], err)
			}
			app, err := m.App(cmd.Context())
			if err != nil {
				return err
			}
			s := app.Scope(user)
			// The same gate as POST .../import: refused whole, nothing written.
			sections := app.UserSections()
			findings, err := hygiene.ScreenExport(&doc, hygiene.Screeners(sections))
			if err != nil {
				return err
			}
			if err := hygiene.Refuse("import "+args[0], findings); err != nil {
				return err
			}
			res, err := memento.ImportUserDocument(cmd.Context(), app.Store, sections, s, &doc)
			if err != nil {
				return err
			}
			if err := app.Reindex(cmd.Context(), s); err != nil {
				return err
			}
			return json.NewEncoder(m.Stdout).Encode(res)
		},
	}

	reindex := &cobra.Command{
		Use:   "reindex",
		Short: "Embed the user's memories and messages that have no vector by the current embedder",
		Args:  cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			return app.Reindex(cmd.Context(), s)
		}),
	}
	cmd.AddCommand(list, history, modeCmd, runs, del, export, imp, reindex)
	return cmd
}

// recallItem is an item as `memento recall --json` prints it.
type recallItem struct {
	ID      string             `json:"id"`
	Kind    string             `json:"kind"`
	Text    string             `json:"text"`
	Score   float64            `json:"score"`
	Scores  map[string]float64 `json:"scores"`
	Sources []string           `json:"sources"`
}

// recallOutput is what `memento recall --json` prints.
type recallOutput struct {
	Items  []recallItem `json:"items"`
	Tokens int          `json:"tokens"`
}

func (m *Main) recallCommand() *cobra.Command {
	var user, query, thread string
	var k int
	var asJSON, text bool
	cmd := &cobra.Command{
		Use:   "recall",
		Short: "Bring back what Memento remembers about a user that is relevant to a query",
		Long: `Recall assembles a user's memory for a query with no language-model call: the
memories and past messages most relevant to it, ranked by BM25, embedding similarity
and recency, each with its score breakdown and the messages it came from. --text
prints the whole context block a prompt would hold (with --thread, the thread's
active context and latest summary).`,
		Example: `  memento recall --user ann --query "what does she watch on weekends" --k 5 --json`,
		Args:    cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			ctx := cmd.Context()
			asm, err := app.Assembler(ctx)
			if err != nil {
				return err
			}
			c, err := asm.Assemble(ctx, memento.RecallQuery{Scope: s, Thread: thread, Query: query, K: k})
			if err != nil {
				return err
			}
			if asJSON {
				out := recallOutput{Items: make([]recallItem, len(c.Items)), Tokens: c.Tokens}
				for i, it := range c.Items {
					out.Items[i] = recallItem{ID: it.ID, Kind: it.Kind, Text: it.Text, Score: it.Score, Scores: it.Scores, Sources: it.Sources}
				}
				return json.NewEncoder(m.Stdout).Encode(out)
			}
			if text {
				fmt.Fprint(m.Stdout, c.Text)
				fmt.Fprintf(m.Stdout, "(%d tokens)\n", c.Tokens)
				return nil
			}
			for i, it := range c.Items {
				fmt.Fprintf(m.Stdout, "%2d. %.3f %-9s %s\n     scores %s  sources %s\n", i+1, it.Score, it.Kind, it.Text, formatScores(it.Scores), strings.Join(it.Sources, ","))
			}
			fmt.Fprintf(m.Stdout, "%d items, context %d tokens, %.2f ms\n", len(c.Items), c.Tokens, c.TookMS)
			return nil
		}),
	}
	cmd.Flags().StringVar(&user, "user", "", "user id (required)")
	cmd.Flags().StringVar(&query, "query", "", "what to recall")
	cmd.Flags().StringVar(&thread, "thread", "", "the thread the prompt is for")
	cmd.Flags().IntVar(&k, "k", 10, "how many items")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"items":[{"id","kind","text","score","scores","sources"}],"tokens"}`)
	cmd.Flags().BoolVar(&text, "text", false, "print the rendered context block")
	_ = cmd.MarkFlagRequired("user")
	return cmd
}

func formatScores(s map[string]float64) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%.3f", k, s[k])
	}
	return strings.Join(parts, " ")
}
