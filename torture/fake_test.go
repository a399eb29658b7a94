package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeStore is the durable state of a fake server: it outlives the
// servers a fakeLauncher starts on it, as a store file outlives a killed
// process.
type fakeStore struct {
	mu       sync.Mutex
	threads  map[string][]Message // "user/thread" -> messages
	memories map[string][]Memory  // user -> memories
	jobs     int                  // unfinished jobs
	formed   int                  // messages remembered by an append
	turns    int                  // chat turns answered
}

// fakeLauncher starts in-process fake servers that speak the routes the
// torture tests use. Its faults make the fake misbehave on purpose, so a
// test can check that the torture test notices.
type fakeLauncher struct {
	tb     testing.TB
	mu     sync.Mutex
	stores map[string]*fakeStore
	starts int
	// loseOnRestart drops the oldest message of every thread when a
	// server starts on a store that held one already (the oldest: it was
	// acknowledged for sure, as each client waits for every answer).
	loseOnRestart bool
	// duplicateMemory stores every memory twice.
	duplicateMemory bool
	// firstTurnOnly answers every chat but stores only the first turn of
	// a thread, as the lost-writes bug of concurrent turns did.
	firstTurnOnly bool
	// failStatus, when set, is what every chat answers, but for the
	// seeding's.
	failStatus int
	// warmPolls is how many times each server started answers /readyz
	// with 503 before 200, as a server warming up does; noReadyz leaves
	// the route out, as a server older than it.
	warmPolls int
	noReadyz  bool
	// early counts the requests other than /readyz, /healthz and
	// /metrics that a server got before it was ready.
	early atomic.Int64
}

func newFakeLauncher(tb testing.TB) *fakeLauncher {
	return &fakeLauncher{tb: tb, stores: map[string]*fakeStore{}}
}

func (l *fakeLauncher) Start(ctx context.Context, db string, args ...string) (Server, error) {
	l.mu.Lock()
	st := l.stores[db]
	restart := st != nil
	if st == nil {
		st = &fakeStore{threads: map[string][]Message{}, memories: map[string][]Memory{}}
		l.stores[db] = st
	}
	l.starts++
	l.mu.Unlock()
	if restart && l.loseOnRestart {
		st.mu.Lock()
		for k, msgs := range st.threads {
			if len(msgs) > 1 {
				st.threads[k] = msgs[1:]
			}
		}
		st.mu.Unlock()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fs := &fakeServer{l: l, st: st, ln: ln}
	fs.srv = &http.Server{Handler: fs.routes()}
	go fs.srv.Serve(ln)
	return fs, nil
}

func (l *fakeLauncher) JobStates(ctx context.Context, db string) (map[string]int, error) {
	return map[string]int{"completed": 1}, nil
}

type fakeServer struct {
	l   *fakeLauncher
	st  *fakeStore
	ln  net.Listener
	srv *http.Server
	// polls counts the /readyz requests it answered.
	polls atomic.Int64
}

// ready reports whether the server has answered warmPolls /readyz
// requests with 503 already.
func (s *fakeServer) ready() bool { return s.l.noReadyz || s.polls.Load() > int64(s.l.warmPolls) }

func (s *fakeServer) URL() string                { return "http://" + s.ln.Addr().String() }
func (s *fakeServer) PID() int                   { return 0 }
func (s *fakeServer) Kill() error                { return s.srv.Close() }
func (s *fakeServer) Stop(context.Context) error { return s.srv.Close() }
func (s *fakeServer) Exited() (bool, string)     { return false, "" }
func (s *fakeServer) Log() string                { return "" }

func (s *fakeServer) routes() http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	remember := func(user, id, text string) {
		// The "memory" of a message is its first three words.
		value := strings.Join(strings.Fields(text)[:min(3, len(strings.Fields(text)))], " ")
		m := Memory{ID: fmt.Sprintf("mem-%s-%d", id, len(s.st.memories[user])), Kind: "attribute", Attribute: "LIKES", Value: value, Sources: []string{id}}
		s.st.memories[user] = append(s.st.memories[user], m)
		if s.l.duplicateMemory {
			m.ID += "-again"
			s.st.memories[user] = append(s.st.memories[user], m)
		}
	}
	mux.HandleFunc("POST /v1/users/{user}/threads/{thread}/messages", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ ID, Role, Text string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, 400, map[string]string{"error": err.Error()})
			return
		}
		user, key := r.PathValue("user"), r.PathValue("user")+"/"+r.PathValue("thread")
		s.st.mu.Lock()
		s.st.threads[key] = append(s.st.threads[key], Message{ID: in.ID, Role: "user", Text: in.Text})
		remember(user, in.ID, in.Text)
		s.st.formed++
		s.st.mu.Unlock()
		reply(w, 202, map[string]any{"inserted": 1})
	})
	mux.HandleFunc("POST /v1/chat", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ User, Thread, Message string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, 400, map[string]string{"error": err.Error()})
			return
		}
		if s.l.failStatus != 0 && in.Thread != "seed-chat" {
			reply(w, s.l.failStatus, map[string]string{"error": "fake failure"})
			return
		}
		key := in.User + "/" + in.Thread
		s.st.mu.Lock()
		n := len(s.st.threads[key])
		if n == 0 || !s.l.firstTurnOnly {
			s.st.threads[key] = append(s.st.threads[key],
				Message{ID: fmt.Sprintf("m%d", n), Role: "user", Text: in.Message},
				Message{ID: fmt.Sprintf("m%d", n+1), Role: "assistant", Text: "an answer"})
		}
		s.st.turns++
		s.st.mu.Unlock()
		reply(w, 200, map[string]string{"reply": "an answer"})
	})
	mux.HandleFunc("GET /v1/users/{user}/threads/{thread}", func(w http.ResponseWriter, r *http.Request) {
		s.st.mu.Lock()
		msgs := append([]Message{}, s.st.threads[r.PathValue("user")+"/"+r.PathValue("thread")]...)
		s.st.mu.Unlock()
		reply(w, 200, map[string]any{"messages": msgs})
	})
	mux.HandleFunc("GET /v1/users/{user}/memories", func(w http.ResponseWriter, r *http.Request) {
		s.st.mu.Lock()
		mems := append([]Memory{}, s.st.memories[r.PathValue("user")]...)
		s.st.mu.Unlock()
		reply(w, 200, map[string]any{"memories": mems})
	})
	mux.HandleFunc("GET /v1/users/{user}/context", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"memories": []any{}})
	})
	mux.HandleFunc("GET /v1/catalog/search", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"titles": []any{}})
	})
	mux.HandleFunc("GET /ui/activity", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"live": true, "unfinished": 0})
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]string{"status": "ok"})
	})
	if !s.l.noReadyz {
		mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
			if s.polls.Add(1) <= int64(s.l.warmPolls) {
				w.Header().Set("Retry-After", "1")
				reply(w, 503, map[string]any{"error": map[string]string{"code": "EUNAVAILABLE", "message": "the server is still warming up (titles for 1ms)"}})
				return
			}
			reply(w, 200, map[string]string{"status": "ready"})
		})
	}
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "# TYPE process_resident_memory_bytes gauge")
		fmt.Fprintln(w, "process_resident_memory_bytes 1.2345e+07")
		// Memory formation as a Memento server reports it: every
		// append's message formed 50 ms after it, three jobs waiting.
		s.st.mu.Lock()
		formed, turns := s.st.formed, s.st.turns
		s.st.mu.Unlock()
		fmt.Fprintln(w, "# TYPE memento_memory_lag_seconds histogram")
		fmt.Fprintf(w, "memento_memory_lag_seconds_bucket{le=\"0.05\"} %d\n", formed)
		fmt.Fprintf(w, "memento_memory_lag_seconds_sum %g\n", 0.05*float64(formed))
		fmt.Fprintf(w, "memento_memory_lag_seconds_count %d\n", formed)
		fmt.Fprintln(w, `memento_queue_waiting_jobs{kind="remember"} 2`)
		fmt.Fprintln(w, `memento_queue_waiting_jobs{kind="summarise"} 1`)
		fmt.Fprintln(w, `memento_queue_oldest_waiting_seconds{kind="remember"} 1.5`)
		fmt.Fprintln(w, `memento_queue_oldest_waiting_seconds{kind="summarise"} 0.25`)
		// Turn slots as a Memento server reports them: two slots, each
		// turn waited 20 ms for one.
		fmt.Fprintln(w, "memento_turn_slots 2")
		fmt.Fprintf(w, "memento_turn_slots_taken_total %d\n", turns)
		fmt.Fprintf(w, "memento_turn_slot_wait_seconds_total %g\n", 0.02*float64(turns))
		// The runtime's scheduling latencies: ten wake-ups a turn, one
		// of them past 0.92 ms. And the pool: each turn waited 5 ms
		// for a connection.
		fmt.Fprintf(w, "go_sched_latencies_seconds_bucket{le=\"8.191999999999999e-05\"} %d\n", 5*turns)
		fmt.Fprintf(w, "go_sched_latencies_seconds_bucket{le=\"0.0009175039999999999\"} %d\n", 9*turns)
		fmt.Fprintf(w, "go_sched_latencies_seconds_bucket{le=\"0.010485759999999998\"} %d\n", 10*turns)
		fmt.Fprintf(w, "go_sched_latencies_seconds_bucket{le=\"+Inf\"} %d\n", 10*turns)
		fmt.Fprintf(w, "go_sched_latencies_seconds_count %d\n", 10*turns)
		fmt.Fprintf(w, "memento_postgres_pool_empty_acquires_total %d\n", turns)
		fmt.Fprintf(w, "memento_postgres_pool_empty_acquire_wait_seconds_total %g\n", 0.005*float64(turns))
		fmt.Fprintln(w, `memento_http_request_seconds_bucket{route="POST /v1/users/{user}/threads/{thread}/messages",le="0.001"} 6`)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz", "/healthz", "/metrics":
		default:
			if !s.ready() {
				s.l.early.Add(1)
			}
		}
		mux.ServeHTTP(w, r)
	})
}
