package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/experiment"
	mhttp "github.com/memento-ai/memento/http"
)

func (m *Main) experimentCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "experiment",
		Short: "Run between-subjects studies of memory modes: create, serve (serve --experiment), export, analyze",
		Long: `A study compares memory modes between subjects. Create it with its arms, run it with
memento serve --experiment NAME (the web UI becomes the study: consent, demographics, the
conversation with the agent in the participant's arm's memory mode, the questionnaire),
then export the responses or analyze them. docs/EXPERIMENTS.md describes the whole run.`,
	}
	cmd.AddCommand(m.experimentCreateCommand(), m.experimentListCommand(), m.experimentExportCommand(), m.experimentAnalyzeCommand(), m.experimentSimulateCommand())
	return cmd
}

func (m *Main) experimentCreateCommand() *cobra.Command {
	var name, arms, instrument string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Define a study: its name, its arms (memory modes) and its questionnaire",
		Long: `Create stores a study. --arms lists the arms, each a memory mode (semantic or
episodic) or name=mode for several arms of one mode; participants are assigned to arms
by balanced randomisation and never told theirs. The settings only a simulation can
apply (mode none, +frozen, +decay=...) are refused with the reason: a participant's
user gets the arm's memory mode, and the server's preference decay is one for all. --instrument is the questionnaire: the
id of a shipped one (` + strings.Join(experiment.Instruments(), ", ") + `, the default) or the path of a JSON
file in the same format (experiment/instruments/README.md).`,
		Example: "  memento experiment create --name trust --arms semantic,episodic --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			as, err := experiment.ParseArms(arms)
			if err != nil {
				return err
			}
			in, err := experiment.LoadInstrument(instrument)
			if err != nil {
				return err
			}
			s, err := experiment.NewStudy(name, as, &in)
			if err != nil {
				return err
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			created, err := app.Store.Experiments().CreateStudy(ctx, s)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(created)
			}
			var names []string
			for _, a := range created.Arms {
				names = append(names, a.Name+" ("+a.Mode+")")
			}
			fmt.Fprintf(m.Stdout, "created study %s: arms %s; instrument %s (%d items)\nrun it with: memento serve --experiment %s\n",
				created.Name, strings.Join(names, ", "), created.Instrument.ID, len(created.Instrument.Items), created.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the study's name (letters, digits, '.', '_', '-')")
	cmd.Flags().StringVar(&arms, "arms", "semantic,episodic", "comma-separated arms: a memory mode (semantic or episodic), or name=mode")
	cmd.Flags().StringVar(&instrument, "instrument", experiment.DefaultInstrument, "questionnaire: a shipped instrument's id or a JSON file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the study as JSON")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (m *Main) experimentListCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the studies and how many participants each has",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, err := m.ExistingApp(ctx)
			if err != nil {
				return err
			}
			x := app.Store.Experiments()
			studies, err := x.Studies(ctx)
			if err != nil {
				return err
			}
			type row struct {
				experiment.Study
				Enrolled  int `json:"enrolled"`
				Completed int `json:"completed"`
			}
			rows := []row{}
			for _, s := range studies {
				ps, err := x.Participants(ctx, s.Name)
				if err != nil {
					return err
				}
				r := row{Study: s, Enrolled: len(ps)}
				for _, p := range ps {
					if p.Stage == experiment.StageDone {
						r.Completed++
					}
				}
				rows = append(rows, r)
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(rows)
			}
			tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tARMS\tINSTRUMENT\tENROLLED\tCOMPLETED")
			for _, r := range rows {
				var arms []string
				for _, a := range r.Arms {
					arms = append(arms, a.Name)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", r.Name, strings.Join(arms, ","), r.Instrument.ID, r.Enrolled, r.Completed)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (m *Main) experimentExportCommand() *cobra.Command {
	var name, format, out string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a study's responses as CSV or JSON, for analysis elsewhere",
		Long: `Export writes one row (CSV) or object (JSON) per participant: the arm and its memory
mode, the stage reached, gender, age, familiarity with language models, when they
consented and finished, how many messages they sent, each raw item answer and the score
(reverse items scored min + max - x, then the mean). JSON also holds the study and its
instrument.`,
		Example: "  memento experiment export --name trust --format csv > trust.csv",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if format != "csv" && format != "json" {
				return memento.Errorf(memento.EINVALID, "--format must be csv or json, got %q", format)
			}
			app, err := m.ExistingApp(ctx)
			if err != nil {
				return err
			}
			x := app.Store.Experiments()
			s, err := x.Study(ctx, name)
			if err != nil {
				return err
			}
			ps, err := x.Participants(ctx, name)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				return experiment.WriteExport(m.Stdout, *s, ps, format)
			}
			f, err := os.Create(out)
			if err != nil {
				return memento.WrapError(memento.EINVALID, err, "cannot write %s: %v", out, err)
			}
			if err := experiment.WriteExport(f, *s, ps, format); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the study")
	cmd.Flags().StringVar(&format, "format", "csv", "csv or json")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write to this file instead of standard output")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (m *Main) experimentAnalyzeCommand() *cobra.Command {
	var name, plotDir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "Score a study and report descriptives, comparability, assumptions, tests, effect size and power",
		Long: `Analyze scores every participant who finished (reverse items min + max - x, score the
mean of the items) and reports, per arm, the descriptives; the comparability of the arms
(chi-squared homogeneity for gender, Kruskal-Wallis for age and for familiarity with
language models); the assumptions (Shapiro-Wilk per arm, Bartlett for equal variances);
Student's t, Welch's t and Mann-Whitney U, with the one the assumptions call for chosen
and the reason; Cohen's d with its 95 % confidence interval; and the participants per
arm a study needs to detect the observed effect with 80 % power at α = 0.05.
--plot DIR draws the score distribution per arm (box and points) and the item means.`,
		Example: "  memento experiment analyze --name trust --json --plot plots/",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, err := m.ExistingApp(ctx)
			if err != nil {
				return err
			}
			x := app.Store.Experiments()
			s, err := x.Study(ctx, name)
			if err != nil {
				return err
			}
			ps, err := x.Participants(ctx, name)
			if err != nil {
				return err
			}
			r, err := experiment.Analyze(*s, ps)
			if err != nil {
				return err
			}
			var files []string
			if plotDir != "" {
				if files, err = experiment.Plot(r, plotDir); err != nil {
					return err
				}
			}
			return writeReport(m.Stdout, asJSON, r, files)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the study")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&plotDir, "plot", "", "draw the plots (PNG) into this folder")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// study is the web study serve --experiment runs, or nil without the
// flag. The study must exist: a typo must not start an empty one.
func (m *Main) study(ctx context.Context, app *engine.Engine) (*mhttp.Study, error) {
	if m.experiment == "" {
		return nil, nil
	}
	x := app.Store.Experiments()
	s, err := x.Study(ctx, m.experiment)
	if err != nil {
		if memento.ErrorCode(err) == memento.ENOTFOUND {
			return nil, memento.Errorf(memento.ENOTFOUND, "--experiment: no study named %q; create it with memento experiment create --name %s", m.experiment, m.experiment)
		}
		return nil, err
	}
	app.Logger.Info("serving a study", "study", s.Name, "arms", len(s.Arms), "instrument", s.Instrument.ID)
	st := &mhttp.Study{Store: x, Name: s.Name, Tenant: app.Config.Tenant}
	if m.experimentSeed != 0 {
		st.Assign = experiment.Balanced(rand.New(rand.NewPCG(m.experimentSeed, m.experimentSeed)))
	}
	return st, nil
}

// writeReport prints an analysis or a simulation: as indented JSON with
// the plots written (a "plots" field beside the report's own), or as text
// followed by a line per plot.
func writeReport(w io.Writer, asJSON bool, r interface{ WriteText(io.Writer) error }, plots []string) error {
	if asJSON {
		doc, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if len(plots) > 0 && len(doc) > 2 && doc[len(doc)-1] == '}' {
			list, err := json.Marshal(plots)
			if err != nil {
				return err
			}
			doc = append(append(append(doc[:len(doc)-1], `,"plots":`...), list...), '}')
		}
		var out bytes.Buffer
		if err := json.Indent(&out, doc, "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
		_, err = w.Write(out.Bytes())
		return err
	}
	if err := r.WriteText(w); err != nil {
		return err
	}
	for _, f := range plots {
		fmt.Fprintln(w, "plot:", f)
	}
	return nil
}
