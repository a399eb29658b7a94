// Package s3test gives tests an S3-compatible object store: an in-process
// fake (github.com/johannesboyne/gofakes3) or, when MEMENTO_TEST_S3 is set,
// a real server such as versitygw in CI.
package s3test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/memento-ai/memento/s3"
)

// Server is an S3 endpoint for a test.
type Server struct {
	Config s3.Config
	Bucket string
	// Prefix is a key prefix of the test's own, so tests sharing a real
	// bucket do not see each other's objects.
	Prefix string
	// Close stops a fake endpoint (a real one stays up).
	Close func()
}

// URL is the snapshot URL of the server's bucket and prefix.
func (s *Server) URL() string { return "s3://" + s.Bucket + "/" + s.Prefix }

// Env returns the MEMENTO_S3_* variables that reach the server.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"MEMENTO_S3_ENDPOINT":   s.Config.Endpoint,
		"MEMENTO_S3_ACCESS_KEY": s.Config.AccessKey,
		"MEMENTO_S3_SECRET_KEY": s.Config.SecretKey,
		"MEMENTO_S3_REGION":     s.Config.Region,
	}
}

// Store opens the server's store.
func (s *Server) Store(tb testing.TB) *s3.Store {
	tb.Helper()
	st, err := s3.Open(s.Config, s.Bucket, s.Prefix)
	if err != nil {
		tb.Fatalf("open S3 store: %v", err)
	}
	return st
}

var prefixes atomic.Int64

// Fake starts an in-process S3 endpoint with one bucket and stops it when
// the test ends.
func Fake(tb testing.TB) *Server {
	tb.Helper()
	backend := s3mem.New()
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	ts := httptest.NewServer(faker.Server())
	tb.Cleanup(ts.Close)
	if err := backend.CreateBucket("memento-test"); err != nil {
		tb.Fatalf("create bucket: %v", err)
	}
	return &Server{
		Config: s3.Config{Endpoint: ts.URL, AccessKey: "fake-key", SecretKey: "fake-secret", Region: "us-east-1"},
		Bucket: "memento-test",
		Prefix: fmt.Sprintf("t%d", prefixes.Add(1)),
		Close:  ts.Close,
	}
}

// Real returns the server MEMENTO_TEST_S3 names
// (http://key:secret@host:port/bucket), creating the bucket if missing,
// with a prefix of the test's own; it skips the test when the variable is
// unset.
func Real(tb testing.TB) *Server {
	tb.Helper()
	raw := os.Getenv("MEMENTO_TEST_S3")
	if raw == "" {
		tb.Skip("MEMENTO_TEST_S3 is not set; set it to http://key:secret@host:port/bucket to test against a real S3 server")
	}
	cfg, bucket, prefix, err := s3.ParseTestURL(raw)
	if err != nil {
		tb.Fatalf("MEMENTO_TEST_S3: %v", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	name := strings.NewReplacer("/", "-", " ", "-").Replace(tb.Name())
	if prefix != "" {
		prefix += "/"
	}
	s := &Server{Config: cfg, Bucket: bucket, Prefix: fmt.Sprintf("%s%s-%d-%d", prefix, name, os.Getpid(), prefixes.Add(1)), Close: func() {}}
	st := s.Store(tb)
	if err := st.EnsureBucket(context.Background(), cfg.Region); err != nil {
		tb.Fatalf("create bucket %s: %v", bucket, err)
	}
	return s
}
