package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/s3"
	"github.com/memento-ai/memento/snapshot"
)

// checkSnapshotURL validates the --snapshot setting (empty: none).
func checkSnapshotURL(raw string) error {
	if raw == "" {
		return nil
	}
	if _, err := snapshot.ParseURL(raw); err != nil {
		return memento.Errorf(memento.EINVALID, "--snapshot (MEMENTO_SNAPSHOT): %s", memento.ErrorMessage(err))
	}
	return nil
}

// openSnapshotStore opens the store a snapshot URL names, a directory for
// file:///dir, a bucket for s3://bucket/prefix with the endpoint, keys,
// region and TLS of the MEMENTO_S3_* variables, and checks that it
// answers (pingSnapshots).
func (m *Main) openSnapshotStore(ctx context.Context, raw string) (snapshot.Store, error) {
	loc, err := snapshot.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	var st snapshot.Store
	switch loc.Scheme {
	case "s3":
		cfg, err := s3.ConfigFromEnv(m.Getenv)
		if err != nil {
			return nil, err
		}
		if st, err = s3.Open(cfg, loc.Bucket, loc.Prefix); err != nil {
			return nil, err
		}
	default:
		if st, err = snapshot.OpenFile(loc.Dir); err != nil {
			return nil, err
		}
	}
	if err := pingSnapshots(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

// pingSnapshots checks that the store answers, within a bound, so a wrong
// endpoint fails at start with an error that names it.
func pingSnapshots(ctx context.Context, st snapshot.Store) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := st.Ping(ctx); err != nil {
		return memento.WrapError(memento.EUNAVAILABLE, err, "the snapshot store cannot be used: %s", memento.ErrorMessage(err))
	}
	return nil
}

// startSnapshots sets up `serve --snapshot`: it checks the store, restores
// the learned models the local store lacks, starts the write-behind and
// returns the route that restores unknown users on first access and
// reports writes. Without --snapshot the route does nothing.
// MEMENTO_SNAPSHOT_DEBOUNCE (a duration, default 2s) sets how long a user
// must be quiet before their snapshot is written.
func (m *Main) startSnapshots(ctx context.Context, app *engine.Engine) (func(huma.API, *mhttp.Server), *mhttp.SnapshotHooks, error) {
	if m.Config.Snapshot == "" {
		return func(huma.API, *mhttp.Server) {}, nil, nil
	}
	st, err := m.openSnapshotStore(ctx, m.Config.Snapshot)
	if err != nil {
		return nil, nil, err
	}
	snap := app.Snapshots(st)
	if _, err := snap.PullModel(ctx, app.Config.Tenant, profile.ModelName, profile.RestoredMark, true); err != nil {
		app.Logger.Warn("the co-occurrence model could not be restored from the snapshot store", "err", err)
	}
	var opts snapshot.Options
	if v := m.Getenv("MEMENTO_SNAPSHOT_DEBOUNCE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, nil, memento.Errorf(memento.EINVALID, "MEMENTO_SNAPSHOT_DEBOUNCE must be a duration such as 2s, got %q", v)
		}
		opts.Debounce, opts.Poll = d, min(time.Second, max(d/2, 10*time.Millisecond))
		opts.MinBackoff, opts.MaxBackoff = min(time.Second, d), min(5*time.Minute, 100*d)
	}
	metrics := snapshot.NewMetrics(app.Registry)
	wb := &snapshot.WriteBehind{Snapshots: snap, Changes: app.Store, ModelNames: []string{profile.ModelName}, Metrics: metrics, Logger: app.Logger, Options: opts}
	if err := wb.Start(ctx); err != nil {
		return nil, nil, err
	}
	app.OnClose(wb.Close)
	restorer := &snapshot.Restorer{Snapshots: snap, Metrics: metrics, Logger: app.Logger, Restored: wb.MarkWritten}
	app.Logger.Info("snapshots", "store", st.String())
	hooks := mhttp.SnapshotHooks{Ensure: restorer.Ensure, Changed: wb.Notify, Deleted: restorer.Forget}
	return mhttp.RegisterSnapshots(hooks), &hooks, nil
}

// snapshotResult is what push and pull print with --json.
type snapshotResult struct {
	Users    int `json:"users"`
	Written  int `json:"written,omitempty"`
	Restored int `json:"restored,omitempty"`
	Skipped  int `json:"skipped,omitempty"`
	Missing  int `json:"missing,omitempty"`
	Failed   int `json:"failed"`
	Models   int `json:"models"`
}

func (m *Main) snapshotCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Copy users' state to and from a snapshot store",
		Long: `Copy users' state (threads with their active contexts, messages, summaries, events,
memories and profile) to or from a snapshot store: file:///dir (one JSON document per
user, written atomically) or s3://bucket/prefix (endpoint, keys, region and TLS from
MEMENTO_S3_ENDPOINT, MEMENTO_S3_ACCESS_KEY, MEMENTO_S3_SECRET_KEY, MEMENTO_S3_REGION
and MEMENTO_S3_INSECURE). serve --snapshot URL keeps the store up to date by itself.`,
	}
	cmd.AddCommand(m.snapshotPushCommand(), m.snapshotPullCommand())
	return cmd
}

// snapshotFlags are the flags push and pull share.
type snapshotFlags struct {
	user   string
	all    bool
	url    string
	asJSON bool
}

func (f *snapshotFlags) add(cmd *cobra.Command, urlHelp string) {
	cmd.Flags().StringVar(&f.user, "user", "", "the user to copy")
	cmd.Flags().BoolVar(&f.all, "all", false, "copy every user of the tenant (and the learned models), with a progress bar")
	cmd.Flags().StringVar(&f.url, "to", "", urlHelp)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.MarkFlagsOneRequired("user", "all")
	cmd.MarkFlagsMutuallyExclusive("user", "all")
}

// progress returns a progress bar on standard error for --all, or nil.
func (m *Main) progress(all bool, n int, what string) *progressbar.ProgressBar {
	if !all {
		return nil
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(m.Stderr), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetPredictTime(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(m.Stderr) }))
}

func (m *Main) printSnapshot(f *snapshotFlags, res snapshotResult, verb string) error {
	if f.asJSON {
		if err := json.NewEncoder(m.Stdout).Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(m.Stdout, "%s %d users to %s: %d written, %d restored, %d skipped, %d missing, %d failed, %d models\n",
			verb, res.Users, f.url, res.Written, res.Restored, res.Skipped, res.Missing, res.Failed, res.Models)
	}
	if res.Failed > 0 {
		return fmt.Errorf("%s: %d of %d users failed (see above)", verb, res.Failed, res.Users)
	}
	return nil
}

// snapshotsAt opens the snapshot store url names, then the app, and
// returns the copier between the two: push and pull check the remote store
// before they touch the local one.
func (m *Main) snapshotsAt(ctx context.Context, url string) (*engine.Engine, *snapshot.Snapshots, error) {
	st, err := m.openSnapshotStore(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	app, err := m.App(ctx)
	if err != nil {
		return nil, nil, err
	}
	return app, app.Snapshots(st), nil
}

func (m *Main) snapshotPushCommand() *cobra.Command {
	f := &snapshotFlags{}
	cmd := &cobra.Command{
		Use:   "push",
		Short: "Write users from the local store to a snapshot store",
		Long: `Write the snapshot of one user (--user) or of every user of the tenant (--all, with the
learned models and a progress bar) to the store --to names. --json prints
{"users","written","failed","models"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, snap, err := m.snapshotsAt(ctx, f.url)
			if err != nil {
				return err
			}
			users := []string{f.user}
			if f.all {
				if users, err = app.Store.Users(ctx, app.Config.Tenant); err != nil {
					return err
				}
			}
			res := snapshotResult{Users: len(users)}
			bar := m.progress(f.all, len(users), "push")
			for _, u := range users {
				if _, err := snap.Push(ctx, app.Scope(u)); err != nil {
					res.Failed++
					fmt.Fprintf(m.Stderr, "push %s: %s\n", u, message(err))
				} else {
					res.Written++
				}
				if bar != nil {
					_ = bar.Add(1)
				}
			}
			if f.all {
				v, err := snap.PushModel(ctx, app.Config.Tenant, profile.ModelName)
				if err != nil {
					return err
				}
				if v > 0 {
					res.Models++
				}
			}
			return m.printSnapshot(f, res, "push")
		},
	}
	f.add(cmd, "snapshot store to write to: file:///dir or s3://bucket/prefix")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func (m *Main) snapshotPullCommand() *cobra.Command {
	f := &snapshotFlags{}
	var replace bool
	var from string
	cmd := &cobra.Command{
		Use:   "pull",
		Short: "Restore users from a snapshot store into the local store",
		Long: `Restore one user (--user) or every user the snapshot store has for the tenant (--all,
with the learned models and a progress bar) from the store --to (or --from) names.
Users the local store has are skipped unless --replace, which deletes the local user
first. --json prints {"users","restored","skipped","missing","failed","models"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if from != "" {
				f.url = from
			}
			if f.url == "" {
				return memento.Errorf(memento.EINVALID, "pull needs the snapshot store: --to URL (or --from URL)")
			}
			app, snap, err := m.snapshotsAt(ctx, f.url)
			if err != nil {
				return err
			}
			users := []string{f.user}
			if f.all {
				if users, err = snap.RemoteUsers(ctx, app.Config.Tenant); err != nil {
					return err
				}
			}
			res := snapshotResult{Users: len(users)}
			bar := m.progress(f.all, len(users), "pull")
			for _, u := range users {
				ok, err := snap.Pull(ctx, app.Scope(u), replace)
				switch {
				case memento.ErrorCode(err) == memento.ECONFLICT:
					res.Skipped++
				case err != nil:
					res.Failed++
					fmt.Fprintf(m.Stderr, "pull %s: %s\n", u, message(err))
				case ok:
					res.Restored++
				default:
					res.Missing++
				}
				if bar != nil {
					_ = bar.Add(1)
				}
			}
			if f.all {
				ok, err := snap.PullModel(ctx, app.Config.Tenant, profile.ModelName, profile.RestoredMark, !replace)
				if err != nil {
					return err
				}
				if ok {
					res.Models++
				}
			}
			return m.printSnapshot(f, res, "pull")
		},
	}
	f.add(cmd, "snapshot store to read from: file:///dir or s3://bucket/prefix")
	cmd.Flags().StringVar(&from, "from", "", "the same as --to: the store to read from")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace users the local store has")
	return cmd
}
