package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/eval"
)

func (m *Main) evalColdstartCommand() *cobra.Command {
	var requests, movielens string
	var k int
	var asJSON, quiet bool
	cmd := &cobra.Command{
		Use:   "coldstart",
		Short: "Score first recommendations for new users by how well known the titles are",
		Long: `Replay each request of --requests (one per line; blank lines and lines starting
with # are skipped) as the first message of a new user in a new thread through the
agent, and score the titles shown by MovieLens: the gain of a title is
log(1 + its rating count), matched by normalised title and year against
movies.csv and ratings.csv (unmatched titles gain 0); "known" is the share of
shown titles with at least 20 ratings; "oracleRatio" is the mean gain over the
best mean gain any ranking of the catalog's titles matching the same understood
constraints could reach. Two baselines answer the same constraints: catalogOrder
(year order, as earlier versions ranked) and prior (the catalog's default order:
notability, blended with relevance for free text). Each request is judged on as
many titles as the agent showed, at most --k (--k when it showed none).

MovieLens is research data: it judges the ranking here and never feeds the
catalog. --json prints
{"requests","meanGain","known","oracleRatio","baselines":{"catalogOrder":{...},"prior":{...}}}.
Without --db it uses a fresh temporary store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if k <= 0 || k > memento.MaxPageSize {
				return memento.Errorf(memento.EINVALID, "--k must be from 1 to %d, got %d", memento.MaxPageSize, k)
			}
			reqs, err := readRequestFile(requests)
			if err != nil {
				return err
			}
			pop, err := eval.ReadPopularity(movielens)
			if err != nil {
				return fmt.Errorf("--movielens: %w", err)
			}
			if err := m.scratchDB(cmd, "coldstart.db"); err != nil {
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
			cat, err := app.Catalog(ctx)
			if err != nil {
				return err
			}
			opts := eval.ColdstartOptions{Requests: reqs, K: k, Tenant: m.Config.Tenant, Catalog: cat, Popularity: pop}
			if !quiet {
				opts.Progress = m.Stderr
			}
			res, err := eval.Coldstart(ctx, ag, opts)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			return writeColdstartTable(m.Stdout, res)
		},
	}
	cmd.Flags().StringVar(&requests, "requests", "", "file of requests, one per line, such as eval/requests/coldstart-dev.txt")
	cmd.Flags().StringVar(&movielens, "movielens", "", "MovieLens directory with movies.csv and ratings.csv, such as ../shared/data/movielens")
	cmd.Flags().IntVar(&k, "k", 10, "most titles judged per request")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress lines on stderr")
	_ = cmd.MarkFlagRequired("requests")
	_ = cmd.MarkFlagRequired("movielens")
	return cmd
}

// readRequestFile reads the request file, saying which flag is wrong.
func readRequestFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, memento.Errorf(memento.EINVALID, "--requests: no such file %s", path)
		}
		return nil, memento.Errorf(memento.EINVALID, "--requests: %v", err)
	}
	defer f.Close()
	reqs, err := eval.ReadRequests(f)
	if err != nil {
		return nil, fmt.Errorf("--requests %s: %w", path, err)
	}
	return reqs, nil
}

// writeColdstartTable prints the figures and a line per request.
func writeColdstartTable(w io.Writer, res *eval.ColdstartResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%d requests\n\nranking\tmean gain\tknown\toracle ratio\n", res.Requests)
	row := func(name string, f eval.ColdstartFigures) {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\n", name, f.MeanGain, f.Known, f.OracleRatio)
	}
	row("agent", res.ColdstartFigures)
	row(eval.BaselineCatalogOrder, res.Baselines[eval.BaselineCatalogOrder])
	row(eval.BaselinePrior, res.Baselines[eval.BaselinePrior])
	fmt.Fprintf(tw, "\nrequest\tjudged\tmatches\tgain\toracle\tcatalog order\tprior\tshown\n")
	for _, r := range res.PerRequest {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%s\n", r.Request, r.Judged, r.Matches, r.Gain, r.Oracle, r.CatalogOrder, r.Prior, strings.Join(r.Shown, "; "))
	}
	return tw.Flush()
}
