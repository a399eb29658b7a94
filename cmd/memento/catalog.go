package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/prefs"
)

func (m *Main) catalogCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Search, import and inspect the title catalog"}
	cmd.AddCommand(m.catalogSearchCommand(), m.catalogStatsCommand(), m.catalogImportCommand(), m.catalogBuildCommand())
	return cmd
}

func (m *Main) catalogSearchCommand() *cobra.Command {
	var q memento.TitleQuery
	var person string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search",
		Short: "Search the catalog",
		Example: `  memento catalog search --genre Comedy --min-year 2010 --size 3
  memento catalog search --text "bank heist" --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if person != "" {
				q.People = []string{person}
			}
			app, err := m.App(cmd.Context())
			if err != nil {
				return err
			}
			cat, err := app.Catalog(cmd.Context())
			if err != nil {
				return err
			}
			page, err := cat.Search(cmd.Context(), q)
			if err != nil {
				return err
			}
			res := mhttp.NewSearchResult(page)
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tTITLE\tYEAR\tGENRES")
			for _, t := range res.Titles {
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", t.ID, t.Title, t.Year, strings.Join(t.Genres, ", "))
			}
			fmt.Fprintf(w, "page %d, %d of %d titles\n", res.Page, len(res.Titles), res.Total)
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&q.Genres, "genre", nil, "a genre; repeat for several (any matches)")
	f.BoolVar(&q.AllGenres, "all-genres", false, "require every --genre instead of any")
	f.StringVar(&q.Type, "type", "", "title type, such as movie or tvSeries")
	f.IntVar(&q.MinYear, "min-year", 0, "earliest year, inclusive")
	f.IntVar(&q.MaxYear, "max-year", 0, "latest year, inclusive")
	f.StringVar(&person, "person", "", "a cast member, case-insensitive")
	f.StringVar(&q.Text, "text", "", "free text: exact title matches first, then BM25 over title and plot blended with notability")
	f.StringVar(&q.Sort, "sort", memento.SortDefault, `order: empty for the best known first, "year" for newest first`)
	f.StringArrayVar(&q.Exclude, "exclude", nil, "a title id never to return; repeat for several")
	f.IntVar(&q.Page, "page", 1, "page number, from 1")
	f.IntVar(&q.Size, "size", memento.DefaultPageSize, "titles per page")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (m *Main) catalogStatsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the catalog's titles by type and genre",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			app, err := m.App(cmd.Context())
			if err != nil {
				return err
			}
			cat, err := app.Catalog(cmd.Context())
			if err != nil {
				return err
			}
			st, err := cat.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(st)
			}
			fmt.Fprintf(m.Stdout, "%d titles\n", st.Titles)
			for k, v := range st.Types {
				fmt.Fprintf(m.Stdout, "  type %s: %d\n", k, v)
			}
			for k, v := range st.Genres {
				fmt.Fprintf(m.Stdout, "  genre %s: %d\n", k, v)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// importReport is what `catalog import --json` prints.
type importReport struct {
	File string `json:"file"`
	catalog.ImportReport
	Written  int  `json:"written"`
	Replaced bool `json:"replaced"`
	Total    int  `json:"total"`
	// VectorsPruned is how many cached title vectors (--embed-cache) went
	// with titles, or texts of titles, no longer in the catalog.
	VectorsPruned int64 `json:"vectorsPruned"`
}

func (m *Main) catalogImportCommand() *cobra.Command {
	var format, ratings string
	var replace, asJSON bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import titles into the store's catalog",
		Long: `Import titles into the catalog kept in the store (--db).

Formats: imdb (title.basics.tsv or .tsv.gz), movielens (movies.csv) and jsonl
(one {"id","title","type","year","endYear","genres","cast","overview",
"runtimeMinutes","isAdult","notability"} object a line). Without --replace the
titles extend the current catalog (the embedded one until something was
imported); with it they replace it. Malformed rows are skipped and counted.

Every title gets a notability (0-1) that search ranks by: from IMDb's numVotes
in title.ratings.tsv beside the IMDb file, or from the rating counts of
ratings.csv beside MovieLens's movies.csv (or the file --ratings names); from
the notability field of JSON lines; otherwise from the titles' own fields
(plot length, cast size, how many titles the cast is in).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			titles, rep, err := catalog.ReadFileRatings(args[0], format, ratings)
			if err != nil {
				return err
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			if !replace {
				// Extending starts from the catalog in use, so the first
				// import keeps the embedded titles.
				if n, err := app.Store.CountTitles(ctx); err != nil {
					return err
				} else if n == 0 {
					base, err := catalog.Embedded()
					if err != nil {
						return err
					}
					if _, err := app.Store.PutTitles(ctx, base.All(), false); err != nil {
						return err
					}
				}
			}
			written, err := app.Store.PutTitles(ctx, titles, replace)
			if err != nil {
				return err
			}
			total, err := app.Store.CountTitles(ctx)
			if err != nil {
				return err
			}
			pruned, err := pruneTitleVectors(ctx, app.Store)
			if err != nil {
				return err
			}
			out := importReport{File: args[0], ImportReport: rep, Written: written, Replaced: replace, Total: total, VectorsPruned: pruned}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(out)
			}
			for _, e := range rep.Errors {
				fmt.Fprintf(m.Stderr, "warning: line %d skipped: %s: %s\n", e.Line, e.Reason, e.Detail)
			}
			fmt.Fprintf(m.Stdout, "imported %d titles from %s (%d malformed rows skipped); the catalog has %d titles\n", written, args[0], rep.Skipped, total)
			source := map[string]string{catalog.NotabilityCounts: "rating counts in " + rep.RatingsFile,
				catalog.NotabilityFile: "the file's notability fields", catalog.NotabilityFields: "the titles' fields"}[rep.Notability]
			fmt.Fprintf(m.Stdout, "notability from %s\n", source)
			if pruned > 0 {
				fmt.Fprintf(m.Stdout, "%d cached title vectors of titles no longer in the catalog removed\n", pruned)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "input format: imdb, movielens or jsonl")
	cmd.Flags().StringVar(&ratings, "ratings", "", "IMDb title.ratings.tsv or MovieLens ratings.csv to rank titles by (default: the one beside FILE, if any)")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace the catalog instead of extending it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (m *Main) catalogBuildCommand() *cobra.Command {
	var src, out string
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the embedded catalog file from the Wikipedia film lists",
		Long:  "Build the compressed JSON-lines catalog that is embedded in the binary from the wikimovies data (one gzipped JSON array per decade), with every title's notability computed from the data (plot length, cast, how many films the cast is in, poster, sequels). `go generate ./catalog` runs the same generator.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			titles, rep, err := catalog.BuildWikiMovies(src)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			tmp := out + ".tmp"
			f, err := os.Create(tmp)
			if err != nil {
				return err
			}
			zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
			if err := catalog.WriteJSONL(zw, titles); err != nil {
				f.Close()
				return err
			}
			if err := zw.Close(); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp, out); err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "wrote %d titles to %s (%+v)\n", len(titles), out, rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&src, "src", "../shared/data/wikimovies", "folder of the wikimovies data")
	cmd.Flags().StringVar(&out, "out", "catalog.jsonl.gz", "output file")
	return cmd
}

// pruneTitleVectors drops the cached title vectors (--embed-cache) of
// texts that no title of the stored catalog has now, and returns how many
// went. The servers that load the stored catalog embed exactly these
// texts (catalog.New changes no field TitleText reads). A server started
// with --catalog on the same store embeds the titles of its own file that
// are not in the stored catalog again.
func pruneTitleVectors(ctx context.Context, st engine.Store) (int64, error) {
	vc, ok := st.(memento.VectorCache)
	if !ok {
		return 0, nil
	}
	titles, err := st.Titles(ctx)
	if err != nil {
		return 0, err
	}
	keep := make([]memento.TextKey, len(titles))
	for i, t := range titles {
		keep[i] = memento.KeyOf(prefs.TitleText(t))
	}
	return vc.PruneVectors(ctx, keep)
}
