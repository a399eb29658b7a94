package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/eval"
)

func (m *Main) evalExtractCommand() *cobra.Command {
	var data string
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "extract",
		Short: "Score what attribute memory keeps of labelled user messages",
		Long: `Run each labelled message of --data (JSON lines: id, kind, optional asked — the
agent's turn before it — and before — earlier messages of the user —, message,
expect: the (attribute, value) pairs it should be remembered as) through the
attribute pipeline with the configured model and schema, each item as a new user
in its own thread, and score what the message's run stored.

A stored fact is correct when its attribute is the expected one and it holds
every word of the expected value; precision counts correct facts, recall the
expected pairs found. Figures are per attribute, per kind of message and
overall, with the share of small talk (with requests for now) and of injection
attempts that stored anything, which must be 0, and the share of what
corrections must end (supersedes: memories of their earlier messages) that
is no longer current after them. A keyword baseline in the same
run files the whole message under every attribute whose schema name or
description shares a word with it.

eval/extract/dev.jsonl is the part to develop against; eval/extract/test.jsonl
is held out. --json prints {"items","pairs","kinds","scores":[{"extractor",
"overall":{"precision","recall","f1",...},"byAttribute","byKind",
"smallTalkStored","injectionStored","superseded","corrections"}]}; --verbose adds the items each got wrong.
Without --db it uses a fresh temporary store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			f, err := os.Open(data)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "--data: %v", err)
			}
			items, err := eval.ReadExtractItems(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("--data %s: %w", data, err)
			}
			if err := m.scratchDB(cmd, "extract.db"); err != nil {
				return err
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			p, err := app.Pipeline(ctx)
			if err != nil {
				return err
			}
			model, err := app.Model(ctx)
			if err != nil {
				return err
			}
			mem := &eval.MemoryExtractor{Label: "memento (" + model.Name() + ")", Store: app.Store, Pipeline: p}
			base := eval.NewKeywordExtractor(p.Schema().Attributes)
			rep, err := eval.ScoreExtraction(ctx, items, mem, base)
			if err != nil {
				return err
			}
			if !verbose {
				for i := range rep.Scores {
					rep.Scores[i].Misses = nil
				}
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(rep)
			}
			fmt.Fprintf(m.Stdout, "%d messages, %d expected pairs\n", rep.Items, rep.Pairs)
			for _, sc := range rep.Scores {
				fmt.Fprintf(m.Stdout, "\n%s: precision %.3f recall %.3f F1 %.3f; small talk stored %.3f, injections stored %.3f; corrections superseded %.3f of %d\n",
					sc.Extractor, sc.Overall.Precision, sc.Overall.Recall, sc.Overall.F1, sc.SmallTalkStored, sc.InjectionStored, sc.Superseded, sc.Corrections)
				tw := tabwriter.NewWriter(m.Stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "attribute\tprecision\trecall\tf1\textracted\texpected")
				for _, a := range slices.Sorted(maps.Keys(sc.ByAttr)) {
					v := sc.ByAttr[a]
					fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d\t%d\n", a, v.Precision, v.Recall, v.F1, v.Extracted, v.Expected)
				}
				tw.Flush()
				for _, e := range sc.Errors {
					fmt.Fprintln(m.Stdout, "error:", e)
				}
				for _, miss := range sc.Misses {
					fmt.Fprintf(m.Stdout, "  %s %q missing %v wrong %v\n", miss.ID, miss.Message, miss.Missing, miss.Wrong)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "eval/extract/dev.jsonl", "labelled messages (JSON lines)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "list the items each extractor got wrong")
	return cmd
}
