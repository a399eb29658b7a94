// Package s3 keeps snapshots in S3-compatible object storage (Amazon S3,
// MinIO, versitygw, ...) through github.com/minio/minio-go/v7. A *Store
// implements snapshot.Store: each snapshot object is one object under the
// store's key prefix, written with one PUT (which S3 makes atomic: readers
// see the old object or the new one).
//
// The endpoint, keys, region and TLS come from MEMENTO_S3_* variables
// (ConfigFromEnv); the bucket and prefix from the snapshot URL
// s3://bucket/prefix. Requests are retried a little by the client and
// bounded by dial and header timeouts, so an unreachable endpoint fails in
// seconds with an error that names it; the snapshot write-behind does the
// longer retrying.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/memento-ai/memento"
)

// Config says how to reach the object store.
type Config struct {
	// Endpoint is host:port or a URL (http://host:port uses plain HTTP,
	// https://host:port TLS). Default s3.amazonaws.com.
	Endpoint  string
	AccessKey string
	SecretKey string
	Region    string
	// Insecure uses plain HTTP for an endpoint given without a scheme.
	Insecure bool
	// Timeout bounds connecting and waiting for a response's headers.
	// Default 10s.
	Timeout time.Duration
}

// ConfigFromEnv reads MEMENTO_S3_ENDPOINT, MEMENTO_S3_ACCESS_KEY,
// MEMENTO_S3_SECRET_KEY, MEMENTO_S3_REGION and MEMENTO_S3_INSECURE (true
// or 1 for plain HTTP) through getenv. Errors: EINVALID.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Endpoint:  getenv("MEMENTO_S3_ENDPOINT"),
		AccessKey: getenv("MEMENTO_S3_ACCESS_KEY"),
		SecretKey: getenv("MEMENTO_S3_SECRET_KEY"),
		Region:    getenv("MEMENTO_S3_REGION"),
	}
	if v := getenv("MEMENTO_S3_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, memento.Errorf(memento.EINVALID, "MEMENTO_S3_INSECURE must be true or false, got %q", v)
		}
		c.Insecure = b
	}
	return c, nil
}

// endpoint splits the configured endpoint into host:port and TLS.
func (c Config) endpoint() (host string, secure bool, err error) {
	e := strings.TrimSpace(c.Endpoint)
	if e == "" {
		return "s3.amazonaws.com", true, nil
	}
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || strings.Trim(u.Path, "/") != "" {
			return "", false, memento.Errorf(memento.EINVALID, "MEMENTO_S3_ENDPOINT must be host:port or http(s)://host:port, got %q", c.Endpoint)
		}
		return u.Host, u.Scheme == "https", nil
	}
	return e, !c.Insecure, nil
}

// Store is a snapshot store in one bucket, under a key prefix.
type Store struct {
	client   *minio.Client
	bucket   string
	prefix   string
	endpoint string
}

// Open returns the store of a bucket and prefix. It does not contact the
// endpoint; call Ping. Errors: EINVALID for a bad configuration.
func Open(c Config, bucket, prefix string) (*Store, error) {
	host, secure, err := c.endpoint()
	if err != nil {
		return nil, err
	}
	if bucket == "" {
		return nil, memento.Errorf(memento.EINVALID, "an S3 snapshot store needs a bucket: s3://bucket/prefix")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: 3 * timeout,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
	}
	client, err := minio.New(host, &minio.Options{
		Creds:      credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure:     secure,
		Region:     c.Region,
		Transport:  transport,
		MaxRetries: 2,
	})
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "S3 endpoint %q: %v", c.Endpoint, err)
	}
	scheme := "http"
	if secure {
		scheme = "https"
	}
	return &Store{client: client, bucket: bucket, prefix: strings.Trim(prefix, "/"), endpoint: scheme + "://" + host}, nil
}

// String names the store as its URL and endpoint, without keys.
func (s *Store) String() string {
	u := "s3://" + s.bucket
	if s.prefix != "" {
		u += "/" + s.prefix
	}
	return u + " at " + s.endpoint
}

func (s *Store) key(k string) string {
	if s.prefix == "" {
		return k
	}
	return s.prefix + "/" + k
}

// unavailable wraps an error of the endpoint with a message naming it.
func (s *Store) unavailable(err error, format string, args ...any) error {
	return memento.WrapError(memento.EUNAVAILABLE, err, "%s: S3 snapshot store %s: %v", fmt.Sprintf(format, args...), s, err)
}

// Put writes an object with one PUT.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	_, err := s.client.PutObject(ctx, s.bucket, s.key(key), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		ContentType: contentType(key),
	})
	if err != nil {
		return s.unavailable(err, "write %s", key)
	}
	return nil
}

func contentType(key string) string {
	if strings.HasSuffix(key, ".json") {
		return "application/json"
	}
	return "application/octet-stream"
}

// Get reads an object. Errors: ENOTFOUND, EUNAVAILABLE.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.readError(err, key)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		return nil, s.readError(err, key)
	}
	return b, nil
}

func (s *Store) readError(err error, key string) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return memento.Errorf(memento.ENOTFOUND, "snapshot %s not found in %s", key, s)
	}
	return s.unavailable(err, "read %s", key)
}

// Delete removes an object; S3 answers a missing one with success too.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.client.RemoveObject(ctx, s.bucket, s.key(key), minio.RemoveObjectOptions{}); err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil
		}
		return s.unavailable(err, "remove %s", key)
	}
	return nil
}

// List returns the keys under prefix, in order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.key(prefix), Recursive: true}) {
		if obj.Err != nil {
			return nil, s.unavailable(obj.Err, "list %s", prefix)
		}
		k := obj.Key
		if s.prefix != "" {
			k = strings.TrimPrefix(k, s.prefix+"/")
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

// Ping checks that the bucket exists and takes an object (".ping" under
// the prefix). Errors: EUNAVAILABLE naming the endpoint and the bucket.
func (s *Store) Ping(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return s.unavailable(err, "cannot reach the endpoint")
	}
	if !ok {
		return memento.Errorf(memento.EUNAVAILABLE, "S3 snapshot store %s: bucket %q does not exist", s, s.bucket)
	}
	if err := s.Put(ctx, ".ping", []byte("ok")); err != nil {
		return err
	}
	return nil
}

// EnsureBucket creates the bucket when it does not exist.
func (s *Store) EnsureBucket(ctx context.Context, region string) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return s.unavailable(err, "look up bucket %s", s.bucket)
	}
	if ok {
		return nil
	}
	if err := s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region}); err != nil {
		code := minio.ToErrorResponse(err).Code
		if code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
			return nil
		}
		return s.unavailable(err, "create bucket %s", s.bucket)
	}
	return nil
}

// ErrNoEndpoint is returned by ParseTestURL for an empty URL.
var ErrNoEndpoint = errors.New("no S3 test endpoint")

// ParseTestURL reads the MEMENTO_TEST_S3 form of a store:
// http://key:secret@host:port/bucket[/prefix] (scheme and host are the
// endpoint, user and password the keys, the first path segment the
// bucket). Tests use it.
func ParseTestURL(raw string) (Config, string, string, error) {
	if raw == "" {
		return Config{}, "", "", ErrNoEndpoint
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Config{}, "", "", fmt.Errorf("S3 test URL %q must look like http://key:secret@host:port/bucket", raw)
	}
	c := Config{Endpoint: u.Scheme + "://" + u.Host}
	if u.User != nil {
		c.AccessKey = u.User.Username()
		c.SecretKey, _ = u.User.Password()
	}
	bucket, prefix, _ := strings.Cut(strings.Trim(u.Path, "/"), "/")
	// "bucket//prefix" names the prefix "prefix", not "/prefix": keys
	// would otherwise begin with an empty path segment.
	prefix = strings.Trim(prefix, "/")
	if bucket == "" {
		return Config{}, "", "", fmt.Errorf("S3 test URL %q names no bucket", raw)
	}
	return c, bucket, prefix, nil
}
