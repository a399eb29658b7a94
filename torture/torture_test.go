package torture

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// shortCrash is a crash run small enough for a unit test.
func shortCrash(l Launcher, dir string) CrashConfig {
	// Half a second lets every client finish a few requests even on a
	// busy machine, so there is something to lose.
	return CrashConfig{Launcher: l, Dir: dir, Trials: 2, Clients: 3, Users: 2, KillAfter: [2]time.Duration{500 * time.Millisecond, 600 * time.Millisecond}, JobsBound: 5 * time.Second, Seed: 1}
}

func TestCrashPassesWhenNothingIsLost(t *testing.T) {
	l := newFakeLauncher(t)
	rep, err := RunCrash(context.Background(), shortCrash(l, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Failed != 0 || rep.Lost != 0 || rep.Duplicates != 0 || rep.DuplicateMemories != 0 {
		t.Fatalf("report = %+v, want a pass with nothing lost or duplicated", rep)
	}
	if len(rep.Results) != 2 || l.starts != 4 {
		t.Errorf("%d trials and %d starts, want 2 trials of a start and a restart each", len(rep.Results), l.starts)
	}
	for _, tr := range rep.Results {
		if tr.Acknowledged == 0 || tr.AckMessages+tr.AckChats != tr.Acknowledged {
			t.Errorf("trial %d acknowledged %d (%d messages, %d chats), want some, adding up", tr.Trial, tr.Acknowledged, tr.AckMessages, tr.AckChats)
		}
		if !tr.JobsEnded || tr.JobsEndedMs < 0 || tr.Error != "" {
			t.Errorf("trial %d: jobs ended %v (%v ms), error %q", tr.Trial, tr.JobsEnded, tr.JobsEndedMs, tr.Error)
		}
		if tr.Memories == 0 {
			t.Errorf("trial %d counted no memories, want the fake's", tr.Trial)
		}
	}
}

func TestCrashFindsLostAndDuplicated(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*fakeLauncher)
		check func(*CrashReport) bool
	}{
		{"lost on restart", func(l *fakeLauncher) { l.loseOnRestart = true }, func(r *CrashReport) bool { return r.Lost > 0 }},
		{"memory stored twice", func(l *fakeLauncher) { l.duplicateMemory = true }, func(r *CrashReport) bool { return r.DuplicateMemories > 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newFakeLauncher(t)
			tt.setup(l)
			rep, err := RunCrash(context.Background(), shortCrash(l, t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || rep.Failed == 0 || !tt.check(rep) {
				t.Fatalf("report = %+v, want a failure that counts it", rep)
			}
			if len(rep.Results[0].Problems) == 0 {
				t.Error("the failing trial lists no problem")
			}
		})
	}
}

func TestCheckWrites(t *testing.T) {
	user, thread := "crash-u0", "t"
	msgs := func(ms ...Message) map[string][]Message { return map[string][]Message{user + "/" + thread: ms} }
	m := func(id, role, text string) Message { return Message{ID: id, Role: role, Text: text} }
	acked := []sent{
		{user: user, thread: thread, id: "a", text: "one"},
		{user: user, thread: thread, text: "chat", chat: true},
	}
	tests := []struct {
		name            string
		threads         map[string][]Message
		memories        []Memory
		lost, dups, mem int
	}{
		{name: "all there", threads: msgs(m("a", "user", "one"), m("x", "user", "chat"), m("y", "assistant", "r"))},
		{name: "message missing", threads: msgs(m("x", "user", "chat"), m("y", "assistant", "r")), lost: 1},
		{name: "chat answer missing", threads: msgs(m("a", "user", "one"), m("x", "user", "chat")), lost: 1},
		{name: "chat missing", threads: msgs(m("a", "user", "one")), lost: 1},
		{name: "id twice", threads: msgs(m("a", "user", "one"), m("a", "user", "one"), m("x", "user", "chat"), m("y", "assistant", "r")), dups: 1},
		{name: "text twice under two ids", threads: msgs(m("a", "user", "one"), m("x", "user", "chat"), m("y", "assistant", "r"), m("z", "user", "chat"), m("w", "assistant", "r")), dups: 1},
		{name: "unacknowledged message stored is fine", threads: msgs(m("a", "user", "one"), m("b", "user", "cut off"), m("x", "user", "chat"), m("y", "assistant", "r"))},
		{
			name:     "memory twice",
			threads:  msgs(m("a", "user", "one"), m("x", "user", "chat"), m("y", "assistant", "r")),
			memories: []Memory{{ID: "1", Attribute: "LIKES", Value: "v", Sources: []string{"a"}}, {ID: "2", Attribute: "LIKES", Value: "v", Sources: []string{"a"}}, {ID: "3", Attribute: "LIKES", Value: "v", Sources: []string{"a", "b"}}},
			mem:      1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newFakeLauncher(t)
			srv, err := l.Start(context.Background(), "db")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Kill()
			st := l.stores["db"]
			st.threads, st.memories[user] = tt.threads, tt.memories
			cl := NewClient(srv.URL(), 5*time.Second)
			defer cl.Close()
			got := checkWrites(context.Background(), cl, acked, 1, "crash-u")
			if got.err != nil {
				t.Fatal(got.err)
			}
			if got.lost != tt.lost || got.duplicates != tt.dups || got.dupMemories != tt.mem {
				t.Errorf("lost %d, duplicates %d, duplicate memories %d (problems %q); want %d, %d, %d", got.lost, got.duplicates, got.dupMemories, got.problems, tt.lost, tt.dups, tt.mem)
			}
		})
	}
}

func TestLoadMixed(t *testing.T) {
	l := newFakeLauncher(t)
	rep, err := RunLoad(context.Background(), LoadConfig{Launcher: l, Dir: t.TempDir(), Clients: 4, Duration: 300 * time.Millisecond, Users: 2, SeedMessages: 2, Restart: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Errors != 0 || !rep.Healthy || l.starts != 2 {
		t.Fatalf("report = %+v after %d starts, want a pass after a restart", rep, l.starts)
	}
	sum := 0
	for _, op := range []string{"chat", "append", "context", "search"} {
		o, ok := rep.Ops[op]
		if !ok || o.Requests == 0 {
			t.Errorf("no %s requests in %v", op, rep.Ops)
			continue
		}
		if o.P50 > o.P99 || o.P99 > o.Max {
			t.Errorf("%s: p50 %v, p99 %v, max %v out of order", op, o.P50, o.P99, o.Max)
		}
		sum += o.Requests
	}
	if sum != rep.Requests || rep.Statuses["200"]+rep.Statuses["202"] != rep.Requests {
		t.Errorf("requests %d, by operation %d, statuses %v: they should add up", rep.Requests, sum, rep.Statuses)
	}
	if rep.RSSBytes != 12345000 || rep.RSSSource != "/metrics" {
		t.Errorf("RSS = %d from %q, want the fake's metric", rep.RSSBytes, rep.RSSSource)
	}
	// The fake forms each appended message's memories at once: the load's
	// appends, not the seeding's, are what formed during the load.
	b := rep.Background
	if b == nil {
		t.Fatal("no background in the report of a server that reports memory formation")
	}
	if appends := rep.Ops["append"].Requests; b.Formed != int64(appends) || b.LagMeanMs != 50 || b.Waiting != 3 || b.OldestMs != 1500 {
		t.Errorf("background = %+v, want %d formed 50 ms after their message, 3 jobs waiting, the oldest 1.5 s old", *b, appends)
	}
	if want := math.Round(float64(b.Formed)/(float64(rep.DurationMs)/1000)*10) / 10; math.Abs(b.FormedPerSecond-want) > 0.11 {
		t.Errorf("formed per second = %v, want %v", b.FormedPerSecond, want)
	}
	// The fake's turns each waited 20 ms for one of two slots; the
	// seeding's turns are not the load's.
	ts := rep.TurnSlots
	if ts == nil {
		t.Fatal("no turnSlots in the report of a server that reports them")
	}
	if chats := rep.Ops["chat"].Requests; ts.Slots != 2 || ts.Taken != int64(chats) || ts.WaitedMeanMs != 20 {
		t.Errorf("turnSlots = %+v, want 2 slots, %d taken, 20 ms waited on average", *ts, chats)
	}
	// The fake's turns each made ten wake-ups, one of them waiting past
	// 0.92 ms, and waited 5 ms for a connection.
	srv := rep.Server
	if srv == nil {
		t.Fatal("no server in the report of a server that reports its scheduling")
	}
	if chats := int64(rep.Ops["chat"].Requests); srv.Wakeups != 10*chats || srv.WaitedOverMs != 0.92 || srv.WaitedOverShare != 0.1 ||
		srv.PoolWaits != chats || srv.PoolWaitMs != Ms(5*chats) {
		t.Errorf("server = %+v, want %d wake-ups, a tenth past 0.92 ms, %d pool waits of 5 ms each", *srv, 10*chats, chats)
	}
}

// TestLoadWaitsForReady checks that no request of the seeding or of the
// load reaches a server before its /readyz says it is ready, after its
// start and after its restart, with the wait in the report; and that a
// server without /readyz is loaded once /healthz answers.
func TestLoadWaitsForReady(t *testing.T) {
	l := newFakeLauncher(t)
	l.warmPolls = 3
	rep, err := RunLoad(context.Background(), LoadConfig{Launcher: l, Dir: t.TempDir(), Clients: 4, Duration: 200 * time.Millisecond, Users: 2, SeedMessages: 2, Restart: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n := l.early.Load(); n != 0 || !rep.OK || rep.Requests == 0 {
		t.Errorf("%d requests reached a server before it was ready (report ok %v, %d requests)", n, rep.OK, rep.Requests)
	}
	if rep.ReadyMs <= 0 {
		t.Errorf("readyMs = %v, want the wait for the restarted server's three refusals", rep.ReadyMs)
	}

	old := newFakeLauncher(t)
	old.noReadyz = true
	if rep, err := RunLoad(context.Background(), LoadConfig{Launcher: old, Dir: t.TempDir(), Clients: 2, Duration: 100 * time.Millisecond, Users: 1, SeedMessages: 1, Seed: 3}); err != nil || !rep.OK {
		t.Errorf("a server without /readyz: %v, report %+v", err, rep)
	}

	// A server that stays unready is given up on, with its last answer.
	never := newFakeLauncher(t)
	never.warmPolls = 1 << 30
	srv, err := never.Start(context.Background(), "never")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	if _, err := NewClient(srv.URL(), time.Second).WaitReady(context.Background(), 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "warming") {
		t.Errorf("waiting for a server that stays unready = %v, want an error with its answer", err)
	}

	// A server at a URL is waited for too.
	l = newFakeLauncher(t)
	l.warmPolls = 2
	srv, err = l.Start(context.Background(), "url")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	if rep, err := RunLoad(context.Background(), LoadConfig{URL: srv.URL(), Clients: 2, Duration: 100 * time.Millisecond, Users: 1, Seed: 3}); err != nil || !rep.OK || l.early.Load() != 0 {
		t.Errorf("a server at a URL: %v, %d requests before ready, report %+v", err, l.early.Load(), rep)
	}
}

// TestRecorderAfterStart checks that AfterStart counts only the requests
// begun a second or more after the load's start, and that a recorder never
// begun has none.
func TestRecorderAfterStart(t *testing.T) {
	r := newRecorder()
	r.begin(time.Now().Add(-1500 * time.Millisecond))
	// Answered now: begun 0.5 s after the start (the burst), then 1.3 s
	// and 1.4 s after it.
	r.add("append", Result{Class: "202", Code: 202, Latency: time.Second})
	r.add("append", Result{Class: "202", Code: 202, Latency: 200 * time.Millisecond})
	r.add("append", Result{Class: "202", Code: 202, Latency: 100 * time.Millisecond})
	st := r.stats(1500 * time.Millisecond)["append"]
	a := st.AfterStart
	if st.Requests != 3 || st.Max != 1000 || a == nil || a.Requests != 2 || a.Max != 200 || a.P50 != 100 {
		t.Fatalf("stats = %+v, after start %+v; want 3 requests, max 1000 ms, and 2 after the start, max 200 ms", st, a)
	}
	r = newRecorder()
	r.add("append", Result{Class: "202", Code: 202, Latency: time.Millisecond})
	if a := r.stats(time.Second)["append"].AfterStart; a != nil {
		t.Errorf("a recorder never begun has AfterStart %+v", a)
	}
}

// TestParseMetrics reads samples with and without labels, braces inside
// a label's value included, and skips comments and lines without a value.
func TestParseMetrics(t *testing.T) {
	got := parseMetrics(strings.Join([]string{
		"# HELP x y",
		"plain 3",
		`labelled{kind="remember"} 2.5`,
		`memento_http_request_seconds_bucket{route="POST /v1/users/{user}/threads/{thread}/messages",le="+Inf"} 7855`,
		"with_time 4 1700000000000",
		"novalue",
		"bad x",
		"",
	}, "\n"))
	want := map[string]float64{"plain": 3, `labelled{kind="remember"}`: 2.5,
		`memento_http_request_seconds_bucket{route="POST /v1/users/{user}/threads/{thread}/messages",le="+Inf"}`: 7855, "with_time": 4}
	if !cmp.Equal(got, want) {
		t.Errorf("parseMetrics = %v, want %v", got, want)
	}
}

func TestLoadCountsErrors(t *testing.T) {
	l := newFakeLauncher(t)
	l.failStatus = http.StatusServiceUnavailable
	rep, err := RunLoad(context.Background(), LoadConfig{Launcher: l, Dir: t.TempDir(), Clients: 2, Duration: 200 * time.Millisecond, Users: 1, SeedMessages: 1, Mix: LoadMix{Chat: 1, Search: 1}})
	if err != nil {
		t.Fatal(err)
	}
	chats := rep.Ops["chat"]
	if rep.OK || chats.Requests == 0 || chats.Errors != chats.Requests || chats.Statuses["503"] != chats.Requests || rep.Errors != chats.Requests || rep.Ops["search"].Errors != 0 {
		t.Errorf("every load chat answers 503: report ok %v, errors %d, ops %+v", rep.OK, rep.Errors, rep.Ops)
	}
}

func TestLoadSameThread(t *testing.T) {
	for _, lose := range []bool{false, true} {
		l := newFakeLauncher(t)
		l.firstTurnOnly = lose
		rep, err := RunLoad(context.Background(), LoadConfig{Launcher: l, Dir: t.TempDir(), Clients: 6, Users: 1, SeedMessages: 1, SameThread: true})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Thread
		if c == nil || c.Sent != 6 || c.Answered != 6 {
			t.Fatalf("thread check = %+v, want 6 sent and answered", c)
		}
		if lose {
			if rep.OK || c.OK || c.UserMessages != 1 || c.Answers != 1 {
				t.Errorf("a fake that keeps only the first turn: check %+v, report ok %v; want a failure counting 1 message", c, rep.OK)
			}
			continue
		}
		if !rep.OK || !c.OK || c.UserMessages != 6 || c.Answers != 6 || !c.InTurn {
			t.Errorf("check = %+v, report ok %v; want 6 messages and 6 answers in turn", c, rep.OK)
		}
	}
}

func TestLoadRefusesOtherHosts(t *testing.T) {
	for _, u := range []string{"http://10.0.0.1:8080", "http://example.com", "ftp://127.0.0.1:1", "127.0.0.1:8080"} {
		if _, err := RunLoad(context.Background(), LoadConfig{URL: u}); err == nil {
			t.Errorf("RunLoad(--url %s) ran; want it refused", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "http://[::1]:8080", "http://localhost:1"} {
		if err := CheckLoopback(u); err != nil {
			t.Errorf("CheckLoopback(%s) = %v, want nil", u, err)
		}
	}
}

func TestQuantile(t *testing.T) {
	d := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n)
		}
		return out
	}
	tests := []struct {
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{d(7), 0.99, 7},
		{d(1, 2, 3, 4), 0.5, 2},
		{d(1, 2, 3, 4), 0.99, 4},
		{d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.5, 5},
		{d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9},
	}
	for _, tt := range tests {
		if got := quantile(tt.in, tt.q); got != tt.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", tt.in, tt.q, got, tt.want)
		}
	}
}

func TestFaultRatesValidate(t *testing.T) {
	tests := []struct {
		r  FaultRates
		ok bool
	}{
		{FaultRates{}, true},
		{DefaultFaultRates, true},
		{FaultRates{ServerError: 1}, true},
		{FaultRates{ServerError: 0.6, Slow: 0.6}, false},
		{FaultRates{Timeout: -0.1}, false},
		{FaultRates{Malformed: 1.5}, false},
	}
	for _, tt := range tests {
		if err := tt.r.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v, want ok %v", tt.r, err, tt.ok)
		}
	}
}

// understandLike is a schema shaped as the model tasks' are: nullable
// fields, enums, bounds, nested objects and arrays, every field required.
const understandLike = `{"type":"object","additionalProperties":false,"required":["count","genres","kind","reply","search","sub"],
 "properties":{"search":{"type":"boolean"},"genres":{"type":["array","null"],"items":{"type":"string"}},
 "kind":{"type":"string","enum":["movie","tvSeries"]},"count":{"type":"integer","minimum":1,"maximum":24},
 "reply":{"type":"string"},"sub":{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}}}}`

// chatBody is a chat completion request asking for the schema.
func chatBody(schema string) string {
	if schema == "" {
		return `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	}
	return `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"understand_request","strict":true,"schema":` + schema + `}}}`
}

func post(t *testing.T, url, body string) (int, []byte, error) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// content decodes a chat completion and returns its message content.
func content(t *testing.T, b []byte) (string, bool) {
	t.Helper()
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Choices) == 0 {
		return "", false
	}
	return out.Choices[0].Message.Content, true
}

func TestFaultServerGoodAnswers(t *testing.T) {
	fs, err := NewFaultServer(FaultRates{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	code, b, err := post(t, fs.URL+"/chat/completions", chatBody(understandLike))
	if err != nil || code != 200 {
		t.Fatalf("chat = %d %v", code, err)
	}
	c, ok := content(t, b)
	if !ok {
		t.Fatalf("chat answer %s has no content", b)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(c), &got); err != nil {
		t.Fatalf("content %q is not JSON: %v", c, err)
	}
	want := map[string]any{"search": false, "genres": nil, "kind": "movie", "count": 1.0, "reply": "Here are a few titles you might enjoy.", "sub": map[string]any{"ok": false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("minimal answer (-want +got):\n%s", diff)
	}
	code, b, _ = post(t, fs.URL+"/chat/completions", chatBody(""))
	if c, ok := content(t, b); code != 200 || !ok || c == "" {
		t.Errorf("a request without a schema got %d %s, want a text reply", code, b)
	}
	code, b, _ = post(t, fs.URL+"/embeddings", `{"model":"e","input":["a","b"]}`)
	var emb struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &emb); code != 200 || err != nil || len(emb.Data) != 2 || len(emb.Data[0].Embedding) != 64 {
		t.Fatalf("embeddings = %d %s", code, b)
	}
	_, b2, _ := post(t, fs.URL+"/embeddings", `{"model":"e","input":"a"}`)
	var one struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	json.Unmarshal(b2, &one)
	if len(one.Data) != 1 || !cmp.Equal(one.Data[0].Embedding, emb.Data[0].Embedding) {
		t.Error("the same input embeds differently")
	}
	if got := fs.Counts()["/chat/completions"][FaultNone]; got != 2 {
		t.Errorf("counted %d good chat answers, want 2", got)
	}
}

func TestFaultServerFaults(t *testing.T) {
	tests := []struct {
		name  string
		rates FaultRates
		body  string
		check func(code int, b []byte, err error) bool
	}{
		{"server error", FaultRates{ServerError: 1}, chatBody(understandLike), func(code int, b []byte, err error) bool {
			return err == nil && code >= 500 && code <= 503
		}},
		{"malformed", FaultRates{Malformed: 1}, chatBody(understandLike), func(code int, b []byte, err error) bool {
			return err == nil && code == 200 && !json.Valid(b)
		}},
		{"missing field of the schema", FaultRates{MissingField: 1}, chatBody(understandLike), func(code int, b []byte, err error) bool {
			var out struct {
				Choices []struct{ Message struct{ Content string } }
			}
			if err != nil || code != 200 || json.Unmarshal(b, &out) != nil || len(out.Choices) != 1 {
				return false
			}
			var v map[string]any
			if json.Unmarshal([]byte(out.Choices[0].Message.Content), &v) != nil {
				return false
			}
			_, has := v["count"]
			return len(v) == 5 && !has
		}},
		{"missing choices", FaultRates{MissingField: 1}, chatBody(""), func(code int, b []byte, err error) bool {
			return err == nil && code == 200 && json.Valid(b) && !strings.Contains(string(b), "choices")
		}},
		{"slow", FaultRates{Slow: 1}, chatBody(understandLike), func(code int, b []byte, err error) bool {
			return err == nil && code == 200 && json.Valid(b) && strings.Contains(string(b), "choices")
		}},
		{"timeout drops the connection", FaultRates{Timeout: 1}, chatBody(understandLike), func(code int, b []byte, err error) bool {
			return err != nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := NewFaultServer(tt.rates, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer fs.Close()
			fs.SlowDelay, fs.HangMax = 10*time.Millisecond, 50*time.Millisecond
			code, b, err := post(t, fs.URL+"/chat/completions", tt.body)
			if !tt.check(code, b, err) {
				t.Errorf("got %d %s %v", code, b, err)
			}
		})
	}
}

func TestFaultServerHeals(t *testing.T) {
	fs, err := NewFaultServer(FaultRates{Timeout: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := post(t, fs.URL+"/chat/completions", chatBody(""))
		done <- err
	}()
	for fs.Counts()["/chat/completions"][FaultTimeout] == 0 {
		time.Sleep(time.Millisecond)
	}
	fs.Heal()
	if err := <-done; err == nil {
		t.Error("a hanging request was answered; want its connection dropped")
	}
	if code, _, err := post(t, fs.URL+"/chat/completions", chatBody("")); err != nil || code != 200 {
		t.Errorf("after Heal: %d %v, want 200", code, err)
	}
}

func TestFaultRatesAreDrawn(t *testing.T) {
	fs, err := NewFaultServer(FaultRates{ServerError: 0.5}, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	for range 200 {
		if _, _, err := post(t, fs.URL+"/embeddings", `{"input":["x"]}`); err != nil {
			t.Fatal(err)
		}
	}
	c := fs.Counts()["/embeddings"]
	if c[FaultServerError]+c[FaultNone] != 200 || c[FaultServerError] < 60 || c[FaultServerError] > 140 {
		t.Errorf("200 requests at a 50%% error rate drew %v", c)
	}
}
