package s3_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/s3"
	"github.com/memento-ai/memento/s3/s3test"
)

// exercise runs the snapshot.Store contract against a store.
func exercise(t *testing.T, st *s3.Store) {
	t.Helper()
	ctx := context.Background()
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if _, err := st.Get(ctx, "users/default/nobody.json"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("Get of a missing key: %v, want ENOTFOUND", err)
	}
	for _, k := range []string{"users/default/b.json", "users/default/a.json", "users/other/c.json", "models/default/m.bin"} {
		if err := st.Put(ctx, k, []byte("data of "+k)); err != nil {
			t.Fatalf("Put %s: %v", k, err)
		}
	}
	if err := st.Put(ctx, "users/default/a.json", []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, "users/default/a.json")
	if err != nil || string(got) != "new" {
		t.Errorf("Get after overwrite = %q, %v; want new", got, err)
	}
	keys, err := st.List(ctx, "users/default/")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"users/default/a.json", "users/default/b.json"}, keys); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	for range 2 {
		if err := st.Delete(ctx, "users/default/a.json"); err != nil {
			t.Errorf("Delete: %v", err)
		}
	}
	if _, err := st.Get(ctx, "users/default/a.json"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("Get after Delete: %v, want ENOTFOUND", err)
	}
}

func TestFakeS3(t *testing.T) {
	srv := s3test.Fake(t)
	exercise(t, srv.Store(t))
	if !strings.Contains(srv.Store(t).String(), "s3://memento-test/") || strings.Contains(srv.Store(t).String(), "fake-secret") {
		t.Errorf("String = %q: want the URL without keys", srv.Store(t).String())
	}
}

func TestRealS3(t *testing.T) {
	srv := s3test.Real(t)
	exercise(t, srv.Store(t))
}

func TestUnreachableEndpoint(t *testing.T) {
	// A port nobody listens on: take one and close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	st, err := s3.Open(s3.Config{Endpoint: "http://" + addr, AccessKey: "k", SecretKey: "s", Timeout: time.Second}, "bucket", "p")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err = st.Ping(ctx)
	if memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Fatalf("Ping of an unreachable endpoint: %v, want EUNAVAILABLE", err)
	}
	msg := memento.ErrorMessage(err)
	if !strings.Contains(msg, addr) || !strings.Contains(msg, "s3://bucket/p") {
		t.Errorf("message %q does not name the endpoint and the bucket", msg)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Ping took %s to fail", d)
	}
	if err := st.Put(ctx, "k", []byte("x")); memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Errorf("Put to an unreachable endpoint: %v, want EUNAVAILABLE", err)
	}
}

func TestMissingBucket(t *testing.T) {
	srv := s3test.Fake(t)
	st, err := s3.Open(srv.Config, "no-such-bucket", "")
	if err != nil {
		t.Fatal(err)
	}
	err = st.Ping(context.Background())
	if memento.ErrorCode(err) != memento.EUNAVAILABLE || !strings.Contains(memento.ErrorMessage(err), `bucket "no-such-bucket" does not exist`) {
		t.Errorf("Ping with a missing bucket: %v", err)
	}
	if err := st.EnsureBucket(context.Background(), "us-east-1"); err != nil {
		t.Fatalf("EnsureBucket: %v", err)
	}
	if err := st.Ping(context.Background()); err != nil {
		t.Errorf("Ping after EnsureBucket: %v", err)
	}
}

func TestConfig(t *testing.T) {
	env := map[string]string{"MEMENTO_S3_ENDPOINT": "minio:9000", "MEMENTO_S3_INSECURE": "true", "MEMENTO_S3_ACCESS_KEY": "a", "MEMENTO_S3_SECRET_KEY": "b"}
	c, err := s3.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil || !c.Insecure || c.Endpoint != "minio:9000" || c.AccessKey != "a" {
		t.Errorf("ConfigFromEnv = %+v, %v", c, err)
	}
	st, err := s3.Open(c, "b", "p/")
	if err != nil || !strings.HasSuffix(st.String(), "at http://minio:9000") {
		t.Errorf("Open = %v, %v; want plain HTTP", st, err)
	}
	env["MEMENTO_S3_INSECURE"] = "maybe"
	if _, err := s3.ConfigFromEnv(func(k string) string { return env[k] }); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("a bad MEMENTO_S3_INSECURE: %v, want EINVALID", err)
	}
	if _, err := s3.Open(s3.Config{Endpoint: "ftp://x"}, "b", ""); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("an ftp endpoint: %v, want EINVALID", err)
	}
	cfg, bucket, prefix, err := s3.ParseTestURL("http://memento:memento-secret@127.0.0.1:7070/memento-test")
	if err != nil || cfg.Endpoint != "http://127.0.0.1:7070" || cfg.AccessKey != "memento" || cfg.SecretKey != "memento-secret" || bucket != "memento-test" || prefix != "" {
		t.Errorf("ParseTestURL = %+v %q %q %v", cfg, bucket, prefix, err)
	}
}
