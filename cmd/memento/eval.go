package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/eval"
)

func (m *Main) evalCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "eval", Short: "Measure Memento on real data sets"}
	cmd.AddCommand(m.evalFollowupCommand())
	cmd.AddCommand(m.evalLocomoCommand())
	cmd.AddCommand(m.evalMovielensCommand())
	return cmd
}

func (m *Main) evalFollowupCommand() *cobra.Command {
	var data, plotDir string
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "followup",
		Short: "Replay annotated dialogues (IARD) and score rejections and criteria",
		Long: `Replay the user turns of annotated recommendation dialogues in the IARD format
through the agent, each dialogue in its own thread. After each turn annotated REJ
or SEE, the next recommendation must exclude the titles the agent showed before
it (rejection compliance); after each turn annotated CRI-A with a GENRE slot, the
active context must hold that genre (criteria capture). Without --db it uses a
fresh temporary store.`,
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
			res, err := eval.Followup(ctx, ag, m.Config.Tenant, dialogues, genres)
			if err != nil {
				return err
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
			fmt.Fprintf(m.Stdout, "%d dialogues\nrejection compliance %.3f over %d turns\ncriteria capture %.3f over %d turns\n",
				res.Dialogues, res.RejectCompliance, res.RejectTurns, res.CriteriaCapture, res.CriteriaTurns)
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
