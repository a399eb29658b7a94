// Command gen builds the catalog's embedded default data: it reads the
// Wikipedia film lists of the prust/wikipedia-movie-data project, cleans
// them with catalog.BuildWikiMovies (which also gives every title its
// notability, computed from the lists alone) and writes the result as
// gzipped JSON lines (catalog.WriteJSONL) for catalog.Embedded to load. It is run by
// go generate in the catalog package:
//
//	go run ./internal/gen -src ../../shared/data/wikimovies -out data/titles.jsonl.gz
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/memento-ai/memento/catalog"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run builds the catalog and writes it atomically: to a temporary file
// renamed over the output, so a failed run never leaves a truncated catalog
// to embed.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stdout)
	src := fs.String("src", "../../shared/data/wikimovies", "folder of the movies-*.json.gz decade files")
	out := fs.String("out", "data/titles.jsonl.gz", "gzipped JSON-lines file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	titles, report, err := catalog.BuildWikiMovies(*src)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	// A fixed header (no name, no time) makes the output byte-for-byte
	// reproducible, so regenerating an unchanged catalog changes nothing.
	zw.Header = gzip.Header{OS: 255}
	if err := catalog.WriteJSONL(zw, titles); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".titles-*")
	if err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("write catalog: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	summary, _ := json.Marshal(report)
	fmt.Fprintf(stdout, "wrote %s: %d titles, %d bytes\n%s\n", *out, len(titles), buf.Len(), summary)
	return nil
}
