package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/eval"
)

// parseUserRange reads "A-B" (or a single id).
func parseUserRange(s string) (int, int, error) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "-")
	from, err1 := strconv.Atoi(strings.TrimSpace(a))
	to := from
	var err2 error
	if found {
		to, err2 = strconv.Atoi(strings.TrimSpace(b))
	}
	if err1 != nil || err2 != nil || from <= 0 || to < from {
		return 0, 0, memento.Errorf(memento.EINVALID, "--users must be a range of user ids such as 1-300, got %q", s)
	}
	return from, to, nil
}

func (m *Main) evalMovielensCommand() *cobra.Command {
	var data, users, plotDir string
	var k int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "movielens",
		Short: "Score the profile ranking on MovieLens against a popularity baseline",
		Long: `Import movies.csv as the catalog; for each user take the earliest 80% of their ratings
by time as "rated" events and hold out the rest; learn each evaluated user's profile
and the co-occurrence model (from every user's training events); recommend k titles
with the agent's ranking, never titles the user rated; and score hit rate and NDCG@k
against the held-out titles rated 4 or more. The popularity baseline (the titles most
rated in training) is measured in the same run. Users without a held-out title rated
4 or more are left out. --json prints
{"users","k","hit","ndcg","baselines":{"popularity":{"hit","ndcg"}},"seconds"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, to, err := parseUserRange(users)
			if err != nil {
				return err
			}
			if k <= 0 || k > 100 {
				return memento.Errorf(memento.EINVALID, "--k must be from 1 to 100, got %d", k)
			}
			res, err := eval.MovieLens(cmd.Context(), eval.MovieLensOptions{Dir: data, FromUser: from, ToUser: to, K: k})
			if err != nil {
				return err
			}
			if plotDir != "" {
				file, err := eval.PlotMovieLens(plotDir, res)
				if err != nil {
					return err
				}
				fmt.Fprintln(m.Stderr, "wrote", file)
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			pop := res.Baselines["popularity"]
			fmt.Fprintf(m.Stdout, "%d users, k=%d, %.1fs\nprofile ranking  hit@%d %.3f  ndcg@%d %.3f\npopularity       hit@%d %.3f  ndcg@%d %.3f\n",
				res.Users, res.K, res.Seconds, res.K, res.Hit, res.K, res.NDCG, res.K, pop.Hit, res.K, pop.NDCG)
			if pop.Hit > 0 && pop.NDCG > 0 {
				fmt.Fprintf(m.Stdout, "ratio            hit %.2fx  ndcg %.2fx\n", res.Hit/pop.Hit, res.NDCG/pop.NDCG)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "MovieLens directory with movies.csv and ratings.csv, such as ../shared/data/movielens")
	cmd.Flags().StringVar(&users, "users", "1-300", "range of user ids to evaluate")
	cmd.Flags().IntVar(&k, "k", 10, "titles recommended per user")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&plotDir, "plot", "", "write a PNG chart of hit rate and NDCG against the baselines into this folder")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}
