package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/profile"
)

// profileRoutes are the HTTP routes of events and profiles.
func profileRoutes(a *engine.Engine) mhttp.ProfileRoutes {
	return mhttp.ProfileRoutes{Events: a.Store, Profiles: a.Store, EventJobs: a.EventJobs}
}

func (m *Main) eventsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "events", Short: "Record what users did"}
	var asJSON bool
	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Import events from a JSON-lines file and learn the users' profiles",
		Long: `Import events from a JSON-lines file ("-" reads standard input), one event per line:

  {"user":"ann","id":"e1","type":"rated","title":"wiki:Heat_(1995_film)","value":4.5,"at":"2025-01-02T20:00:00Z"}

Types: watched, rated (value 0.5-5), liked, disliked, watchlisted, skipped,
abandoned (value: fraction watched, optional), finished. Titles must be in the
catalog. Every line is checked before anything is stored, and a bad line fails
the import naming its number. Events whose id is stored already are skipped.
The background jobs then run in this process, so the users' profiles and the
co-occurrence model are learned when the command returns. --json prints
{"lines","users","inserted","duplicates"}.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var in io.Reader = m.Stdin
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return memento.Errorf(memento.EINVALID, "events import: %v", err)
				}
				defer f.Close()
				in = f
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			cat, err := app.Catalog(ctx)
			if err != nil {
				return err
			}
			byUser, order, lines, err := readEventLines(ctx, in, cat)
			if err != nil {
				return err
			}
			res := struct {
				Lines      int `json:"lines"`
				Users      int `json:"users"`
				Inserted   int `json:"inserted"`
				Duplicates int `json:"duplicates"`
			}{Lines: lines, Users: len(order)}
			for _, user := range order {
				events := byUser[user]
				s := app.Scope(user)
				for start := 0; start < len(events); start += profile.MaxEvents {
					batch := events[start:min(len(events), start+profile.MaxEvents)]
					n, err := app.Store.AddEvents(ctx, s, batch, app.EventJobs(s))
					if err != nil {
						return fmt.Errorf("events import: user %s: %w", user, err)
					}
					res.Inserted += n
					res.Duplicates += len(batch) - n
				}
			}
			if res.Inserted > 0 {
				if err := app.StartWorkers(ctx); err != nil {
					return err
				}
				if err := app.WaitForJobs(ctx, 30*time.Minute); err != nil {
					return err
				}
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			fmt.Fprintf(m.Stdout, "%d events of %d users: %d stored, %d already there\n", res.Lines, res.Users, res.Inserted, res.Duplicates)
			return nil
		},
	}
	imp.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(imp)
	return cmd
}

// readEventLines reads and checks every line of an import, grouping the
// events by user in the order users first appear.
func readEventLines(ctx context.Context, in io.Reader, cat memento.Catalog) (map[string][]memento.Event, []string, int, error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	byUser := map[string][]memento.Event{}
	var order []string
	lines := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		user, e, err := profile.ParseImportLine([]byte(line))
		if err != nil {
			return nil, nil, 0, memento.Errorf(memento.EINVALID, "events import: line %d: %s", n, memento.ErrorMessage(err))
		}
		if err := profile.CheckEvents(ctx, []memento.Event{e}, cat); err != nil {
			return nil, nil, 0, memento.Errorf(memento.EINVALID, "events import: line %d: %s", n, strings.TrimPrefix(memento.ErrorMessage(err), "events[0]."))
		}
		if _, ok := byUser[user]; !ok {
			order = append(order, user)
		}
		byUser[user] = append(byUser[user], e)
		lines++
	}
	if err := sc.Err(); err != nil {
		return nil, nil, 0, memento.Errorf(memento.EINVALID, "events import: %v", err)
	}
	return byUser, order, lines, nil
}

func (m *Main) profileCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Show what Memento learned from a user's actions",
	}
	var user string
	var asJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Show a user's profile",
		Long: `Show a user's key-value profile: the keys learned from their events (preferredGenres,
dislikedGenres, era, favouritePeople, watchlist, seen, likedTitles, ...) and the keys
they set, each with its source and the events that support it. --json prints the
profile as GET /v1/users/{user}/profile does.`,
		Args: cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			p, err := app.Store.Profile(cmd.Context(), s)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(p)
			}
			if len(p.Keys) == 0 {
				fmt.Fprintf(m.Stdout, "%s has no profile yet\n", user)
				return nil
			}
			fmt.Fprintf(m.Stdout, "profile of %s, version %d\n", user, p.Version)
			w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "KEY\tSOURCE\tEVIDENCE\tVALUE")
			keys := make([]string, 0, len(p.Keys))
			for k := range p.Keys {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				e := p.Keys[k]
				v := string(e.Value)
				if len(v) > 100 {
					v = v[:97] + "..."
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", k, e.Source, len(e.Evidence), v)
			}
			return w.Flush()
		}),
	}
	show.Flags().StringVar(&user, "user", "", "user id")
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = show.MarkFlagRequired("user")
	cmd.AddCommand(show)
	return cmd
}
