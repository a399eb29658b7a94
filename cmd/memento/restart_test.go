package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestConcurrentRequestsAfterRestart fires 64 chats and context reads (a
// quarter chats, as context reads reach the store the fastest) at
// once at a server just restarted on a store with users in it, so that
// every request finds the store's read statements unprepared. They used
// to take every connection of the read pool and wait for one more, for
// ever. The client's timeout only turns a hang into a failure.
func TestConcurrentRequestsAfterRestart(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "memento.db")
	cat := tinyCatalogFile(t)
	args := []string{"--db", db, "--catalog", cat, "--log-level", "error"}
	a, err := serveWith(t, nil, args...)
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	const users = 32
	for u := range users {
		user := fmt.Sprintf("u%d", u)
		if code, body := a.do(t, "POST", "/v1/users/"+user+"/threads/t0/messages",
			`[{"role":"user","text":"I love science fiction films and my sister likes westerns"},{"role":"user","text":"I watch on Netflix most evenings"}]`); code != 202 {
			t.Fatalf("append for %s = %d %v", user, code, body)
		}
		if code, body := a.do(t, "POST", "/v1/chat", `{"user":"`+user+`","thread":"t0","message":"Discover 3 comedy movies"}`); code != 200 {
			t.Fatalf("chat for %s = %d %v", user, code, body)
		}
	}
	if err := a.m.app.WaitForJobs(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Close(ctx); err != nil {
		t.Fatal(err)
	}

	b, err := serveWith(t, nil, args...)
	if err != nil {
		t.Fatalf("serve again: %v", err)
	}
	client := &http.Client{Timeout: 2 * time.Minute}
	const requests = 64
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for i := range requests {
		wg.Go(func() {
			user := fmt.Sprintf("u%d", i%users)
			var req *http.Request
			if i%4 == 0 {
				body := fmt.Sprintf(`{"user":%q,"thread":"t%d","message":"Recommend 3 comedy movies"}`, user, i)
				req, _ = http.NewRequest("POST", b.m.URL()+"/v1/chat", bytes.NewBufferString(body))
				req.Header.Set("Content-Type", "application/json")
			} else {
				req, _ = http.NewRequest("GET", b.m.URL()+"/v1/users/"+user+"/context?query=science+fiction", nil)
			}
			resp, err := client.Do(req)
			if err != nil {
				errs <- fmt.Errorf("request %d: %w", i, err)
				return
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				errs <- fmt.Errorf("request %d (%s %s) = %d %s", i, req.Method, req.URL.Path, resp.StatusCode, msg)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if code, body := b.do(t, "GET", "/healthz", ""); code != 200 {
		t.Errorf("healthz after the burst = %d %v", code, body)
	}
}
