package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/eval"
	"github.com/memento-ai/memento/llm/offline"
)

func (m *Main) evalCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "eval", Short: "Measure Memento on real data sets"}
	cmd.AddCommand(m.evalFollowupCommand())
	cmd.AddCommand(m.evalColdstartCommand())
	cmd.AddCommand(m.evalLocomoCommand())
	cmd.AddCommand(m.evalExtractCommand())
	cmd.AddCommand(m.evalMovielensCommand())
	cmd.AddCommand(m.evalEmotionCommand())
	return cmd
}

func (m *Main) evalFollowupCommand() *cobra.Command {
	var data, plotDir string
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "followup",
		Short: "Replay annotated dialogues (IARD) and score rejections and criteria",
		Long: `Replay the user turns of annotated recommendation dialogues in the IARD format
through the agent, each dialogue in its own thread.

Rejection compliance: a turn annotated REJ or SEE turns down the titles the
agent showed before it and the titles it names. It is honoured only when no
title turned down so far in the dialogue comes back in that turn's answer or a
later one, the answer is not empty while the catalog has titles for its
constraints, and (unless the turn also changes the criteria) the constraints in
force are kept.

Criteria capture: a turn annotated IQU or CRI-* with GENRE, KEYWORDS, TITLE,
ACTOR or YEAR slots is captured when each of those criteria is in the active
context the agent returns for it.

The same dialogues are replayed a second time through the same agent with every
rejection stripped from its understanding (baseline "ignoreRejections"), to show
that the rejection check separates the two. Without --db it uses a fresh
temporary store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			f, err := os.Open(data)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "--data: %v", err)
			}
			dialogues, err := eval.ReadIARD(f)
			f.Close()
			if err != nil {
				return err
			}
			if err := m.scratchDB(cmd, "eval.db"); err != nil {
				return err
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			ag, err := app.Agent(ctx)
			if err != nil {
				return err
			}
			genres, err := app.GenreNormalizer(ctx)
			if err != nil {
				return err
			}
			cat, err := app.Catalog(ctx)
			if err != nil {
				return err
			}
			// The offline rules read each slot value on its own, so that a
			// criterion such as "classic" counts when the context holds
			// what it means (years before 1980), whichever model runs.
			rules := offline.New(offline.Options{Genres: cat.Genres()})
			read := func(v string) *memento.Understanding {
				u, err := rules.UnderstandRequest(ctx, memento.UnderstandInput{Message: v + " movies", Context: memento.NewActiveContext()})
				if err != nil {
					return nil
				}
				return u
			}
			opts := eval.FollowupOptions{Tenant: m.Config.Tenant, Genres: genres, Read: read, Catalog: cat}
			res, err := eval.Followup(ctx, ag, dialogues, opts)
			if err != nil {
				return err
			}
			// The baseline is the same agent with rejections stripped from
			// its understanding, replayed as other users so that it meets
			// none of the first run's memories.
			model := ag.Model
			ag.Model = eval.IgnoreRejections(model)
			opts.UserPrefix = "iard-ignore-"
			base, err := eval.Followup(ctx, ag, dialogues, opts)
			ag.Model = model
			if err != nil {
				return fmt.Errorf("baseline %s: %w", eval.BaselineIgnoreRejections, err)
			}
			// A second baseline also forgets which titles the thread
			// showed before the last answer: the agent as it was before
			// it kept them, with rejections ignored.
			ag.Model, ag.ForgetShown = eval.IgnoreRejections(model), true
			opts.UserPrefix = "iard-forget-"
			forget, err := eval.Followup(ctx, ag, dialogues, opts)
			ag.Model, ag.ForgetShown = model, false
			if err != nil {
				return fmt.Errorf("baseline %s: %w", eval.BaselineIgnoreRejectionsForgetShown, err)
			}
			res.Baselines = map[string]eval.FollowupFigures{
				eval.BaselineIgnoreRejections:            base.Figures(),
				eval.BaselineIgnoreRejectionsForgetShown: forget.Figures(),
			}
			if plotDir != "" {
				file, err := eval.PlotFollowup(plotDir, res)
				if err != nil {
					return err
				}
				fmt.Fprintln(m.Stderr, "wrote", file)
			}
			if !verbose {
				res.Failures = nil
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			fmt.Fprintf(m.Stdout, "%d dialogues\nrejection compliance %.3f over %d turns (%d repeated a title, %d empty, %d dropped constraints)\n",
				res.Dialogues, res.RejectCompliance, res.RejectTurns, res.RejectRepeated, res.RejectEmpty, res.RejectDropped)
			fmt.Fprintf(m.Stdout, "criteria capture %.3f over %d turns (%.3f of %d criteria)\n",
				res.CriteriaCapture, res.CriteriaTurns, res.CriteriaValueCapture, res.Criteria)
			for _, slot := range slices.Sorted(maps.Keys(res.CriteriaBySlot)) {
				sc := res.CriteriaBySlot[slot]
				fmt.Fprintf(m.Stdout, "  %-8s %d of %d\n", slot, sc.Captured, sc.Judged)
			}
			for _, name := range []string{eval.BaselineIgnoreRejections, eval.BaselineIgnoreRejectionsForgetShown} {
				b := res.Baselines[name]
				fmt.Fprintf(m.Stdout, "baseline %s: rejection compliance %.3f over %d turns, criteria capture %.3f over %d turns\n",
					name, b.RejectCompliance, b.RejectTurns, b.CriteriaCapture, b.CriteriaTurns)
			}
			for _, f := range res.Failures {
				fmt.Fprintf(m.Stdout, "FAIL %s dialogue %s turn %d: %q want %v got %v\n", f.Check, f.Dialogue, f.Turn, f.Utterance, f.Want, f.Got)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "IARD JSON file, such as ../shared/data/iard/iard_visible.json")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "list the failed turns")
	cmd.Flags().StringVar(&plotDir, "plot", "", "write a PNG bar chart of the scores into this folder")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}
