package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/client"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/mcp"
)

// tsClientDir holds the TypeScript MCP client test and, once `npm ci` ran
// there (.ci/run does), its node_modules.
var tsClientDir = filepath.Join("..", "..", "mcp", "testdata", "ts-client")

// tsClient returns node and the client script, or skips the test saying
// what is missing.
func tsClient(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the TypeScript MCP client test needs Node 20 (CI installs it)")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("the TypeScript MCP SDK is not installed: run npm ci in %s (.ci/run does)", tsClientDir)
	}
	script, err = filepath.Abs(filepath.Join(tsClientDir, "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

// runTSClient runs the TypeScript client and decodes what it printed.
func runTSClient(t *testing.T, node string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = tsClientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var seen map[string]any
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &seen); jerr != nil {
		t.Fatalf("the TypeScript client printed %q (%v), stderr:\n%s", stdout.String(), err, stderr.String())
	}
	if err != nil || seen["ok"] != true {
		t.Fatalf("the TypeScript client failed: %v\n%s\nstderr:\n%s", err, seen["error"], stderr.String())
	}
	return seen
}

// TestMCPTypeScriptClient drives `memento mcp` over stdio and /mcp on
// `memento serve` with the official TypeScript MCP SDK: it lists the
// tools, adds memories, searches them, gets the context, recommends,
// deletes the user and checks that nothing of the user is left.
func TestMCPTypeScriptClient(t *testing.T) {
	node, script := tsClient(t)
	cat := profileCatalog(t)

	t.Run("stdio", func(t *testing.T) {
		// The client starts this test binary as memento (TestMain).
		t.Setenv(tortureChild, "1")
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(t.TempDir(), "memento.db")
		seen := runTSClient(t, node, script, "stdio", "ts-stdio", exe, "mcp", "--db", db, "--catalog", cat, "--log-level", "error")
		t.Logf("stdio: %v", seen)
		checkForgotten(t, db, "ts-stdio")
	})

	t.Run("http", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "memento.db")
		url := serveMCP(t, "--db", db, "--catalog", cat)
		seen := runTSClient(t, node, script, "http", "ts-http", url+"/mcp")
		t.Logf("http: %v", seen)
		// Nothing of the user is left on the REST side either.
		c, err := client.New(url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Export(t.Context(), "ts-http"); memento.ErrorCode(err) != memento.ENOTFOUND {
			t.Errorf("export of ts-http after delete_all_memories = %v, want ENOTFOUND", err)
		}
	})
}

// serveMCP starts `memento serve` on a free port and returns its URL.
func serveMCP(t *testing.T, args ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &bytes.Buffer{}, &stderr
	m.Getenv = func(string) string { return "" }
	ctx := context.Background()
	if err := m.ParseFlags(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "error"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		if stderr.Len() > 0 {
			t.Logf("server log:\n%s", stderr.String())
		}
	})
	return m.URL()
}

// checkForgotten opens the store the stdio server used and checks that
// nothing of user is in it.
func checkForgotten(t *testing.T, db, user string) {
	t.Helper()
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.DB = db
	app, err := engine.Open(ctx, cfg.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(ctx)
	sc := memento.Scope{Tenant: memento.DefaultTenant, User: user}
	if _, err := app.Store.ExportUser(ctx, sc); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("export of %s after delete_all_memories = %v, want ENOTFOUND", user, err)
	}
	if mems, err := app.Store.Memories(ctx, sc, memento.MemoryFilter{All: true}); err != nil || len(mems) != 0 {
		t.Errorf("memories of %s after delete_all_memories = %v, %v", user, mems, err)
	}
}

// TestMCPStdioKey runs `memento mcp --key` in this process and calls it
// with the Go MCP client: the tools act for the key's tenant and user, a
// call about another user is refused, and a key the store does not know
// stops the command before it serves.
func TestMCPStdioKey(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "memento.db")
	cfg := DefaultConfig()
	cfg.DB = db
	app, err := engine.Open(ctx, cfg.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, key, hash, err := memento.NewAPIKey("acme", "ana", memento.KeyWrite, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Store.CreateKey(ctx, k, hash); err != nil {
		t.Fatal(err)
	}
	app.Close(ctx)

	if _, err := run(t, "", "mcp", "--db", db, "--catalog", profileCatalog(t), "--key", "mk_"+strings.Repeat("x", 43)); memento.ErrorCode(err) != memento.EUNAUTHORIZED {
		t.Errorf("mcp with an unknown key = %v, want EUNAUTHORIZED", err)
	}
	if _, err := run(t, "", "mcp", "--db", db, "--key", key, "--tenant", "other"); memento.ErrorCode(err) != memento.EFORBIDDEN {
		t.Errorf("mcp with a key and another --tenant = %v, want EFORBIDDEN", err)
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m := NewMain()
	m.Stdin, m.Stdout, m.Stderr = inR, outW, &bytes.Buffer{}
	m.Getenv = func(name string) string {
		if name == "MEMENTO_KEY" {
			return key
		}
		return ""
	}
	if err := m.ParseFlags(ctx, []string{"mcp", "--db", db, "--catalog", profileCatalog(t), "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := m.Run(ctx)
		outW.Close()
		done <- err
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add_memory", Arguments: map[string]any{"text": "I love heist films."}})
	if err != nil || res.IsError {
		t.Fatalf("add_memory without a user = %+v, %v", res, err)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_memories", Arguments: map[string]any{"user": "bob"}})
	if err != nil || !res.IsError {
		t.Fatalf("list_memories of another user = %+v, %v; want a tool error", res, err)
	}
	if e := mcp.ParseError(res.Content[0].(*sdk.TextContent).Text); e.Code != memento.EFORBIDDEN {
		t.Errorf("list_memories of another user = %v, want EFORBIDDEN", e)
	}
	cs.Close()
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("mcp: %v", err)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Errorf("close: %v", err)
	}

	app, err = engine.Open(context.Background(), cfg.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(context.Background())
	if msgs, err := app.Store.Messages(context.Background(), memento.Scope{Tenant: "acme", User: "ana"}, mcp.DefaultThread, 0, 0); err != nil || len(msgs) != 1 {
		t.Errorf("acme/ana's messages = %v, %v; want the one added with the key", msgs, err)
	}
}

// bearer adds an API key to every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPHTTPKeys calls /mcp on `memento serve` with the server's real
// authentication: without a key the request is refused with 401, a read
// key of one user reads its user and may not write, and another user is
// refused.
func TestMCPHTTPKeys(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "memento.db")
	cfg := DefaultConfig()
	cfg.DB = db
	app, err := engine.Open(ctx, cfg.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, key, hash, err := memento.NewAPIKey("acme", "ana", memento.KeyRead, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Store.CreateKey(ctx, k, hash); err != nil {
		t.Fatal(err)
	}
	app.Close(ctx)
	url := serveMCP(t, "--db", db, "--catalog", profileCatalog(t)) + "/mcp"

	connect := func(hc *http.Client) (*sdk.ClientSession, error) {
		return sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	}
	if cs, err := connect(http.DefaultClient); err == nil {
		cs.Close()
		t.Error("connected to /mcp without a key")
	} else if !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Errorf("connect without a key: %v, want 401", err)
	}
	cs, err := connect(&http.Client{Transport: bearer{key}})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	toolErr := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			return ""
		}
		return mcp.ParseError(res.Content[0].(*sdk.TextContent).Text).Code
	}
	if code := toolErr("list_memories", map[string]any{}); code != "" {
		t.Errorf("list_memories of the key's user = %s, want an answer", code)
	}
	if code := toolErr("add_memory", map[string]any{"text": "I love heist films."}); code != memento.EFORBIDDEN {
		t.Errorf("add_memory with a read key = %q, want EFORBIDDEN", code)
	}
	if code := toolErr("search_memory", map[string]any{"user": "bob", "query": "films"}); code != memento.EFORBIDDEN {
		t.Errorf("search_memory of another user = %q, want EFORBIDDEN", code)
	}
}
