package s3

import (
	"net/url"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

// FuzzEndpoint feeds MEMENTO_S3_ENDPOINT values to the endpoint parser and
// to Open (which builds the client without contacting it): a value is
// refused with EINVALID naming the variable, or gives a host:port without
// a path and a store whose description names that endpoint.
func FuzzEndpoint(f *testing.F) {
	for _, seed := range []string{
		"", "s3.amazonaws.com", "localhost:9000", "http://127.0.0.1:9000", "https://minio.example.com", "https://minio.example.com/",
		"http://host:9000/path", "ftp://host", "http://", "http://user:pw@host:1", "[::1]:9000", "http://[::1]:9000", " host ", "host/x",
	} {
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, endpoint string, insecure bool) {
		c := Config{Endpoint: endpoint, Insecure: insecure}
		host, secure, err := c.endpoint()
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "MEMENTO_S3_ENDPOINT") {
				t.Fatalf("endpoint(%q) = %v, want EINVALID naming MEMENTO_S3_ENDPOINT", endpoint, err)
			}
			return
		}
		if host == "" {
			t.Fatalf("endpoint(%q) = an empty host", endpoint)
		}
		// URL schemes are case-insensitive: "HTTPS://host" is secure.
		if strings.Contains(endpoint, "://") && secure != strings.HasPrefix(strings.ToLower(strings.TrimSpace(endpoint)), "https") {
			t.Fatalf("endpoint(%q): secure = %v", endpoint, secure)
		}
		st, err := Open(c, "bucket", "/pre/fix/")
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID {
				t.Fatalf("Open with endpoint %q = %v, want EINVALID", endpoint, err)
			}
			return
		}
		if !strings.HasSuffix(st.String(), "://"+host) || st.key("k") != "pre/fix/k" {
			t.Fatalf("store %q (key %q) does not name endpoint %q", st, st.key("k"), host)
		}
	})
}

// FuzzParseTestURL feeds the MEMENTO_TEST_S3 parser any text: an error, or
// an http(s) endpoint and a bucket without slashes.
func FuzzParseTestURL(f *testing.F) {
	for _, seed := range []string{"http://key:secret@127.0.0.1:9000/bucket/prefix", "https://h/b", "http://h/", "ftp://h/b", "", "http://k@h:1/b/p/q"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, bucket, prefix, err := ParseTestURL(raw)
		if err != nil {
			return
		}
		u, perr := url.Parse(c.Endpoint)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("ParseTestURL(%q) endpoint %q is not http(s)://host", raw, c.Endpoint)
		}
		if bucket == "" || strings.Contains(bucket, "/") || strings.HasPrefix(prefix, "/") {
			t.Fatalf("ParseTestURL(%q) = bucket %q prefix %q", raw, bucket, prefix)
		}
	})
}
