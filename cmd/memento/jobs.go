package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
)

func (m *Main) jobsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "Inspect background jobs"}
	var f memento.JobFilter
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List background jobs, newest first",
		Long:  "List background jobs. States: pending, running, retrying, completed, failed (out of attempts: the dead letters).",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			app, err := m.App(cmd.Context())
			if err != nil {
				return err
			}
			jobs, err := app.DB.Jobs(cmd.Context(), f)
			if err != nil {
				return err
			}
			if jobs == nil {
				jobs = []memento.Job{}
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(jobs)
			}
			w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tKIND\tSTATE\tATTEMPT\tCREATED\tLAST ERROR")
			for _, j := range jobs {
				last := ""
				if len(j.Errors) > 0 {
					last = j.Errors[len(j.Errors)-1]
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID, j.Kind, j.State, j.Attempt, j.MaxAttempts, j.CreatedAt.Format("2006-01-02 15:04:05"), last)
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&f.State, "state", "", "only jobs in this state: pending, running, retrying, completed or failed")
	list.Flags().StringVar(&f.Kind, "kind", "", "only jobs of this kind")
	list.Flags().IntVar(&f.Limit, "limit", 100, "at most this many jobs")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list)
	return cmd
}
