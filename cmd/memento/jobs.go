package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
)

func (m *Main) jobsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "Inspect background jobs and retry dead letters"}
	var f memento.JobFilter
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List background jobs, newest first",
		Long: "List background jobs. States: pending, running, retrying, completed, failed (the dead letters: out of attempts, " +
			"or failed at once by an error that cannot succeed on retry, such as invalid input; see reason and lastError in --json).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			app, err := m.ExistingApp(cmd.Context())
			if err != nil {
				return err
			}
			jobs, err := app.Store.Jobs(cmd.Context(), f)
			if err != nil {
				return err
			}
			if jobs == nil {
				jobs = []memento.Job{}
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(jobs)
			}
			return printJobs(m.Stdout, jobs)
		},
	}
	list.Flags().StringVar(&f.State, "state", "", "only jobs in this state: pending, running, retrying, completed or failed")
	list.Flags().StringVar(&f.Kind, "kind", "", "only jobs of this kind")
	list.Flags().IntVar(&f.Limit, "limit", 100, "at most this many jobs")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list, m.jobsRetryCommand(), m.jobsStatsCommand())
	return cmd
}

func (m *Main) jobsStatsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count jobs by kind and state, and show how far memory formation lags",
		Long: "Count background jobs by kind and state (completed ones as long as the queue keeps them), and show each kind's lag: " +
			"jobs waiting (pending, retrying or running) and the age of the oldest, which is how far memory formation trails " +
			"the message log. serve refuses appends with 503 while that age is over --max-queue-lag.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			app, err := m.ExistingApp(cmd.Context())
			if err != nil {
				return err
			}
			st, err := app.Store.JobStats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(st)
			}
			return printJobStats(m.Stdout, st)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printJobStats(w io.Writer, st *memento.JobStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tPENDING\tRUNNING\tRETRYING\tCOMPLETED\tFAILED\tOLDEST WAITING")
	for _, k := range st.Kinds {
		oldest := "-"
		if k.Waiting > 0 {
			oldest = fmt.Sprintf("%.1f s", k.OldestSeconds)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", k.Kind, k.Pending, k.Running, k.Retrying, k.Completed, k.Failed, oldest)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "waiting: %d jobs, the oldest %.1f s old\n", st.Waiting, st.OldestSeconds)
	return err
}

func (m *Main) jobsRetryCommand() *cobra.Command {
	var r memento.JobRetry
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "retry ID... | --failed [--kind K]",
		Short: "Run dead letters again after a fix",
		Long: "Make failed jobs (the dead letters) run again as soon as a worker of a running queue (memento serve) is free, " +
			"keeping their errors and giving one more attempt to a job out of attempts. Name jobs by id (a retrying job " +
			"named by id runs at once instead of after its backoff), or retry every failed job with --failed, of one kind " +
			"with --kind. All named jobs are retried or none is. Prints the retried jobs.",
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				id, err := strconv.ParseInt(a, 10, 64)
				if err != nil || id <= 0 {
					return memento.Errorf(memento.EINVALID, "a job id is a positive number, got %q", a)
				}
				r.IDs = append(r.IDs, id)
			}
			app, err := m.ExistingApp(cmd.Context())
			if err != nil {
				return err
			}
			jobs, err := app.Store.RetryJobs(cmd.Context(), r)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(jobs)
			}
			if len(jobs) == 0 {
				_, err := fmt.Fprintln(m.Stdout, "No failed jobs to retry.")
				return err
			}
			fmt.Fprintf(m.Stdout, "Retried %d jobs:\n", len(jobs))
			return printJobs(m.Stdout, jobs)
		},
	}
	cmd.Flags().BoolVar(&r.Failed, "failed", false, "retry every failed job")
	cmd.Flags().StringVar(&r.Kind, "kind", "", "with --failed, only jobs of this kind")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the retried jobs as JSON, in the shape of jobs list --json")
	return cmd
}

// printJobs writes jobs as a table, one line each with its last error.
func printJobs(out io.Writer, jobs []memento.Job) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tKIND\tSTATE\tATTEMPT\tCREATED\tLAST ERROR")
	for _, j := range jobs {
		state := j.State
		if j.Reason != "" {
			state += " (" + j.Reason + ")"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID, j.Kind, state, j.Attempt, j.MaxAttempts, j.CreatedAt.Format("2006-01-02 15:04:05"), j.LastError)
	}
	return w.Flush()
}
