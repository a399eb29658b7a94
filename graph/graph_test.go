package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
)

// state is the test pipeline's state: what ran, and counters the routers
// read.
type state struct {
	Visited []string `json:"visited"`
	Repairs int      `json:"repairs"`
	Worthy  bool     `json:"worthy"`
}

// visit returns a node that appends its name to the state.
func visit(name string) graph.NodeFunc[state] {
	return func(_ context.Context, s state) (state, error) {
		s.Visited = append(s.Visited, name)
		return s, nil
	}
}

// tickClock is a clock that moves one second forward every time it is read,
// so traces have exact times.
type tickClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(time.Second)
	return t
}

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// linear builds Start -> names[0] -> ... -> End.
func linear(tb testing.TB, names ...string) *graph.Graph[state] {
	tb.Helper()
	g := graph.New[state]("linear")
	prev := graph.Start
	for _, n := range names {
		g.AddNode(n, visit(n))
		g.AddEdge(prev, n)
		prev = n
	}
	g.AddEdge(prev, graph.End)
	return g
}

func mustCompile(tb testing.TB, g *graph.Graph[state], opts ...graph.Option) *graph.Runnable[state] {
	tb.Helper()
	r, err := g.Compile(opts...)
	if err != nil {
		tb.Fatalf("Compile: %v", err)
	}
	return r
}

// nodes lists the node names of a trace.
func nodes(trace []graph.Step) []string {
	var out []string
	for _, s := range trace {
		out = append(out, s.Node)
	}
	return out
}

func TestCompileErrors(t *testing.T) {
	noop := visit("x")
	always := graph.RouteBy(func(state) string { return "a" })
	tests := []struct {
		name       string
		build      func() *graph.Graph[state]
		opts       []graph.Option
		wantNode   string
		wantReason string
	}{
		{"empty graph name", func() *graph.Graph[state] {
			g := graph.New[state]("")
			g.AddNode("a", noop)
			g.AddEdge(graph.Start, "a")
			g.AddEdge("a", graph.End)
			return g
		}, nil, "", "graph name is empty"},
		{"empty node name", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("", noop)
			return g
		}, nil, "", "node name is empty"},
		{"node named Start", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode(graph.Start, noop)
			return g
		}, nil, graph.Start, "is reserved"},
		{"node named End", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode(graph.End, noop)
			return g
		}, nil, graph.End, "is reserved"},
		{"duplicate node", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("a", noop)
			return g
		}, nil, "a", "added twice"},
		{"nil node function", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("b", nil)
			return g
		}, nil, "b", "function is nil"},
		{"edge from End", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddEdge(graph.End, "a")
			return g
		}, nil, graph.End, "leaves graph.End"},
		{"conditional edge to Start", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddEdge(graph.Start, "a")
			g.AddConditionalEdges("a", always, graph.End, graph.Start)
			return g
		}, nil, "a", "leads to graph.Start"},
		{"unconditional edge to Start", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddEdge(graph.Start, "a")
			g.AddEdge("a", graph.Start)
			return g
		}, nil, "a", "leads to graph.Start"},
		{"two unconditional exits", func() *graph.Graph[state] {
			g := linear(t, "a", "b")
			g.AddEdge("a", "c")
			return g
		}, nil, "a", `two unconditional exits (to "b" and to "c")`},
		{"two entry edges", func() *graph.Graph[state] {
			g := linear(t, "a", "b")
			g.AddEdge(graph.Start, "b")
			return g
		}, nil, graph.Start, "two unconditional exits"},
		{"conditional after unconditional", func() *graph.Graph[state] {
			g := linear(t, "a", "b")
			g.AddConditionalEdges("a", always, "a", "b")
			return g
		}, nil, "a", "only one kind of exit"},
		{"unconditional after conditional", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddEdge(graph.Start, "a")
			g.AddConditionalEdges("a", always, "a", graph.End)
			g.AddEdge("a", graph.End)
			return g
		}, nil, "a", "only one kind of exit"},
		{"two sets of conditional edges", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddEdge(graph.Start, "a")
			g.AddConditionalEdges("a", always, "a", graph.End)
			g.AddConditionalEdges("a", always, graph.End)
			return g
		}, nil, "a", "two sets of conditional edges"},
		{"nil router", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("b", noop)
			g.AddConditionalEdges("b", nil, graph.End)
			return g
		}, nil, "b", "router of the conditional edges is nil"},
		{"no targets", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("b", noop)
			g.AddConditionalEdges("b", always)
			return g
		}, nil, "b", "declare no targets"},
		{"duplicate target", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("b", noop)
			g.AddConditionalEdges("b", always, "a", "a")
			return g
		}, nil, "b", `target "a" is declared twice`},
		{"edge from unknown node", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddEdge("ghost", "a")
			return g
		}, nil, "ghost", "no such node was added"},
		{"edge to unknown node", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddEdge(graph.Start, "a")
			g.AddEdge("a", "ghost")
			return g
		}, nil, "a", `an edge leads to "ghost", but no such node was added`},
		{"conditional edge to unknown node", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddEdge(graph.Start, "a")
			g.AddConditionalEdges("a", always, graph.End, "ghost")
			return g
		}, nil, "a", `a conditional edge leads to "ghost"`},
		{"no entry", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddEdge("a", graph.End)
			return g
		}, nil, "", "no entry point"},
		{"empty graph", func() *graph.Graph[state] {
			return graph.New[state]("g")
		}, nil, "", "no entry point"},
		{"node without exit", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddNode("b", noop)
			g.AddEdge(graph.Start, "a")
			g.AddConditionalEdges("a", always, "b", graph.End)
			return g
		}, nil, "b", "the node has no exit"},
		{"unreachable node", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("island", noop)
			g.AddEdge("island", graph.End)
			return g
		}, nil, "island", "unreachable from graph.Start"},
		{"End unreachable", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddNode("b", noop)
			g.AddEdge(graph.Start, "a")
			g.AddEdge("a", "b")
			g.AddEdge("b", "a")
			return g
		}, nil, "", "graph.End is unreachable"},
		{"no path to End from a loop", func() *graph.Graph[state] {
			g := graph.New[state]("g")
			g.AddNode("a", noop)
			g.AddNode("b", noop)
			g.AddNode("c", noop)
			g.AddEdge(graph.Start, "a")
			g.AddConditionalEdges("a", always, "b", graph.End)
			g.AddEdge("b", "c")
			g.AddEdge("c", "b")
			return g
		}, nil, "b", "graph.End cannot be reached from the node"},
		{"step limit zero", func() *graph.Graph[state] {
			return linear(t, "a")
		}, []graph.Option{graph.WithStepLimit(0)}, "", "step limit must be at least 1, got 0"},
		{"nil clock", func() *graph.Graph[state] {
			return linear(t, "a")
		}, []graph.Option{graph.WithClock(nil)}, "", "clock is nil"},
		{"first mistake wins", func() *graph.Graph[state] {
			g := linear(t, "a")
			g.AddNode("a", noop)      // first
			g.AddEdge("a", "ghost")   // second
			g.AddNode(graph.End, nil) // third
			return g
		}, nil, "a", "added twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.build().Compile(tt.opts...)
			if err == nil {
				t.Fatalf("Compile succeeded (%v), want an error", r)
			}
			var be *graph.BuildError
			if !errors.As(err, &be) {
				t.Fatalf("Compile error %T %v is not a *graph.BuildError", err, err)
			}
			if be.Node != tt.wantNode {
				t.Errorf("Node = %q, want %q (error: %v)", be.Node, tt.wantNode, err)
			}
			if !strings.Contains(be.Reason, tt.wantReason) {
				t.Errorf("Reason = %q, want it to contain %q", be.Reason, tt.wantReason)
			}
		})
	}
}

func TestBuildErrorMessage(t *testing.T) {
	g := graph.New[state]("attributes")
	g.AddNode("extractor", visit("extractor"))
	g.AddNode("extractor", visit("extractor"))
	_, err := g.Compile()
	want := `graph "attributes": node "extractor": the node is added twice`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	_, err = graph.New[state]("attributes").Compile()
	want = `graph "attributes": no entry point: add an edge (or conditional edges) from graph.Start`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestRunLinear(t *testing.T) {
	clock := &tickClock{t: epoch}
	r := mustCompile(t, linear(t, "a", "b", "c"), graph.WithClock(clock))
	res, err := r.Run(context.Background(), "run-1", state{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, res.State.Visited); diff != "" {
		t.Errorf("visited (-want +got):\n%s", diff)
	}
	// Each step reads the clock twice: once when it starts, once when it ends.
	want := []graph.Step{
		{Node: "a", Started: epoch, Duration: time.Second, Outcome: graph.OutcomeOK},
		{Node: "b", Started: epoch.Add(2 * time.Second), Duration: time.Second, Outcome: graph.OutcomeOK},
		{Node: "c", Started: epoch.Add(4 * time.Second), Duration: time.Second, Outcome: graph.OutcomeOK},
	}
	if diff := cmp.Diff(want, res.Trace); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if res.Resumed {
		t.Error("Resumed = true for a run without a checkpointer")
	}
}

func TestRunDoesNotShareInput(t *testing.T) {
	r := mustCompile(t, linear(t, "a"))
	in := state{Visited: make([]string, 0, 4)}
	for i := 0; i < 2; i++ {
		res, err := r.Run(context.Background(), "", in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a"}, res.State.Visited); diff != "" {
			t.Errorf("run %d visited (-want +got):\n%s", i, diff)
		}
	}
}

// sentinelGraph is the head of the attribute pipeline: a sentinel that
// stops unworthy messages, then an extractor.
func sentinelGraph(t *testing.T) *graph.Runnable[state] {
	t.Helper()
	g := graph.New[state]("sentinel")
	g.AddNode("sentinel", visit("sentinel"))
	g.AddNode("extractor", visit("extractor"))
	g.AddEdge(graph.Start, "sentinel")
	g.AddConditionalEdges("sentinel", func(_ context.Context, s state) (string, error) {
		if s.Worthy {
			return "extractor", nil
		}
		return graph.End, nil
	}, "extractor", graph.End)
	g.AddEdge("extractor", graph.End)
	return mustCompile(t, g)
}

func TestConditionalRouting(t *testing.T) {
	r := sentinelGraph(t)
	tests := []struct {
		name        string
		worthy      bool
		wantVisited []string
		wantOutcome string
	}{
		{"worth remembering", true, []string{"sentinel", "extractor"}, "extractor"},
		{"small talk", false, []string{"sentinel"}, graph.End},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := r.Run(context.Background(), "", state{Worthy: tt.worthy})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantVisited, res.State.Visited); diff != "" {
				t.Errorf("visited (-want +got):\n%s", diff)
			}
			if got := res.Trace[0].Outcome; got != tt.wantOutcome {
				t.Errorf("sentinel outcome = %q, want %q", got, tt.wantOutcome)
			}
		})
	}
}

func TestConditionalEntry(t *testing.T) {
	g := graph.New[state]("entry")
	g.AddNode("a", visit("a"))
	g.AddNode("b", visit("b"))
	g.AddConditionalEdges(graph.Start, graph.RouteBy(func(s state) string {
		if s.Worthy {
			return "b"
		}
		return "a"
	}), "a", "b")
	g.AddEdge("a", graph.End)
	g.AddEdge("b", graph.End)
	r := mustCompile(t, g)
	res, err := r.Run(context.Background(), "", state{Worthy: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b"}, res.State.Visited); diff != "" {
		t.Errorf("visited (-want +got):\n%s", diff)
	}
}

// repairGraph is extractor -> reviewer, where the reviewer rejects every
// extraction and sends it back for repair at most maxRepairs times, then
// lets it through to the attributor.
func repairGraph(t *testing.T, maxRepairs int, opts ...graph.Option) *graph.Runnable[state] {
	t.Helper()
	g := graph.New[state]("repair")
	g.AddNode("extractor", visit("extractor"))
	g.AddNode("reviewer", func(_ context.Context, s state) (state, error) {
		s.Visited = append(s.Visited, "reviewer")
		if s.Repairs < maxRepairs {
			s.Repairs++
		}
		return s, nil
	})
	g.AddNode("attributor", visit("attributor"))
	g.AddEdge(graph.Start, "extractor")
	g.AddEdge("extractor", "reviewer")
	// The reviewer's verdict is always "garbled"; the counter bounds the
	// loop: it routes back while it just counted a repair.
	routedBack := 0
	g.AddConditionalEdges("reviewer", graph.RouteBy(func(s state) string {
		if s.Repairs > routedBack {
			routedBack = s.Repairs
			return "extractor"
		}
		return "attributor"
	}), "extractor", "attributor")
	g.AddEdge("attributor", graph.End)
	return mustCompile(t, g, opts...)
}

func TestRepairLoop(t *testing.T) {
	r := repairGraph(t, 3)
	res, err := r.Run(context.Background(), "", state{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"extractor", "reviewer",
		"extractor", "reviewer",
		"extractor", "reviewer",
		"extractor", "reviewer",
		"attributor",
	}
	if diff := cmp.Diff(want, nodes(res.Trace)); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if res.State.Repairs != 3 {
		t.Errorf("repairs = %d, want 3", res.State.Repairs)
	}
	var outcomes []string
	for _, s := range res.Trace {
		if s.Node == "reviewer" {
			outcomes = append(outcomes, s.Outcome)
		}
	}
	if diff := cmp.Diff([]string{"extractor", "extractor", "extractor", "attributor"}, outcomes); diff != "" {
		t.Errorf("reviewer outcomes (-want +got):\n%s", diff)
	}
}

func TestStepLimit(t *testing.T) {
	g := graph.New[state]("loop")
	g.AddNode("a", visit("a"))
	g.AddNode("b", visit("b"))
	g.AddEdge(graph.Start, "a")
	g.AddEdge("a", "b")
	g.AddConditionalEdges("b", graph.RouteBy(func(state) string { return "a" }), "a", graph.End)
	r := mustCompile(t, g, graph.WithStepLimit(5))
	res, err := r.Run(context.Background(), "r1", state{})
	var sl *graph.StepLimitError
	if !errors.As(err, &sl) {
		t.Fatalf("err = %v, want a *graph.StepLimitError", err)
	}
	if sl.Limit != 5 || sl.Next != "b" || sl.Graph != "loop" || sl.RunID != "r1" {
		t.Errorf("StepLimitError = %+v", sl)
	}
	want := []string{"a", "b", "a", "b", "a"}
	if diff := cmp.Diff(want, nodes(sl.Trace)); diff != "" {
		t.Errorf("error trace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, nodes(res.Trace)); diff != "" {
		t.Errorf("result trace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, res.State.Visited); diff != "" {
		t.Errorf("state so far (-want +got):\n%s", diff)
	}
	wantMsg := `graph "loop" run "r1": step limit of 5 reached before node "b"; the graph may be looping (last steps: a -> b -> a -> b -> a)`
	if err.Error() != wantMsg {
		t.Errorf("message = %q, want %q", err.Error(), wantMsg)
	}
}

func TestStepLimitDefault(t *testing.T) {
	r := repairGraph(t, 100)
	_, err := r.Run(context.Background(), "", state{})
	var sl *graph.StepLimitError
	if !errors.As(err, &sl) {
		t.Fatalf("err = %v, want a *graph.StepLimitError", err)
	}
	if sl.Limit != graph.DefaultStepLimit || len(sl.Trace) != graph.DefaultStepLimit {
		t.Errorf("limit %d with %d steps, want %d", sl.Limit, len(sl.Trace), graph.DefaultStepLimit)
	}
	if !strings.Contains(sl.Error(), "(last steps: ... -> ") {
		t.Errorf("long trace is not shortened: %s", sl.Error())
	}
}

func TestRouterErrors(t *testing.T) {
	boom := errors.New("model unavailable")
	tests := []struct {
		name    string
		router  graph.Router[state]
		wantErr string
		wantIs  error
	}{
		{"undeclared target", graph.RouteBy(func(state) string { return "nowhere" }),
			`graph "r" run "id": routing after node "a": the router chose "nowhere", which is not a declared target (declared: b, __end__)`, nil},
		{"router error", func(context.Context, state) (string, error) { return "", boom },
			`graph "r" run "id": routing after node "a": model unavailable`, boom},
		{"router panic", graph.RouteBy(func(state) string { panic("bad router") }),
			`graph "r" run "id": routing after node "a": panic: bad router`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := graph.New[state]("r")
			g.AddNode("a", visit("a"))
			g.AddNode("b", visit("b"))
			g.AddEdge(graph.Start, "a")
			g.AddConditionalEdges("a", tt.router, "b", graph.End)
			g.AddEdge("b", graph.End)
			res, err := mustCompile(t, g).Run(context.Background(), "id", state{})
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("err = %v, want %s", err, tt.wantErr)
			}
			var ne *graph.NodeError
			if !errors.As(err, &ne) || ne.Node != "a" || !ne.Routing {
				t.Errorf("err = %#v, want a routing *graph.NodeError for node a", err)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(err, %v) = false", tt.wantIs)
			}
			if len(res.Trace) != 1 || res.Trace[0].Outcome != graph.OutcomeError || res.Trace[0].Err == "" {
				t.Errorf("trace = %+v, want one failed step", res.Trace)
			}
		})
	}
}

func TestNodeError(t *testing.T) {
	g := graph.New[state]("g")
	g.AddNode("a", visit("a"))
	g.AddNode("b", func(_ context.Context, s state) (state, error) {
		s.Visited = append(s.Visited, "b-partial")
		return s, memento.Errorf(memento.EUNAVAILABLE, "the model server did not answer")
	})
	g.AddNode("c", visit("c"))
	g.AddEdge(graph.Start, "a")
	g.AddEdge("a", "b")
	g.AddEdge("b", "c")
	g.AddEdge("c", graph.End)
	clock := &tickClock{t: epoch}
	res, err := mustCompile(t, g, graph.WithClock(clock)).Run(context.Background(), "m1", state{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "b" || ne.Routing || ne.RunID != "m1" {
		t.Fatalf("err = %v, want a *graph.NodeError for node b", err)
	}
	if got := memento.ErrorCode(err); got != memento.EUNAVAILABLE {
		t.Errorf("ErrorCode = %q, want EUNAVAILABLE", got)
	}
	if diff := cmp.Diff([]string{"a"}, res.State.Visited); diff != "" {
		t.Errorf("state is not the last good one (-want +got):\n%s", diff)
	}
	want := []graph.Step{
		{Node: "a", Started: epoch, Duration: time.Second, Outcome: graph.OutcomeOK},
		{Node: "b", Started: epoch.Add(2 * time.Second), Duration: time.Second, Outcome: graph.OutcomeError,
			Err: "memento error: code=EUNAVAILABLE message=the model server did not answer"},
	}
	if diff := cmp.Diff(want, res.Trace); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

func TestNodePanic(t *testing.T) {
	g := graph.New[state]("g")
	g.AddNode("a", func(_ context.Context, s state) (state, error) {
		var m map[string]int
		m["x"] = 1 // a runtime error: assignment to a nil map
		return s, nil
	})
	g.AddEdge(graph.Start, "a")
	g.AddEdge("a", graph.End)
	_, err := mustCompile(t, g).Run(context.Background(), "p", state{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "a" {
		t.Fatalf("err = %v, want a *graph.NodeError for node a", err)
	}
	var pe *graph.PanicError
	if !errors.As(err, &pe) || len(pe.Stack) == 0 {
		t.Fatalf("err = %v, want a *graph.PanicError with a stack", err)
	}
	if !strings.Contains(err.Error(), `node "a": panic: assignment to entry in nil map`) {
		t.Errorf("message = %q", err.Error())
	}
}

func TestContextCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := map[string]bool{}
	g := graph.New[state]("g")
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, func(_ context.Context, s state) (state, error) {
			ran[n] = true
			if n == "a" {
				cancel()
			}
			return s, nil
		})
	}
	g.AddEdge(graph.Start, "a")
	g.AddEdge("a", "b")
	g.AddEdge("b", "c")
	g.AddEdge("c", graph.End)
	res, err := mustCompile(t, g).Run(ctx, "c1", state{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), `stopped before node "b"`) {
		t.Errorf("message = %q", err.Error())
	}
	if diff := cmp.Diff(map[string]bool{"a": true}, ran); diff != "" {
		t.Errorf("nodes run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, nodes(res.Trace)); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

// counting is a four-node linear graph whose nodes count their executions
// and can be told to fail.
type counting struct {
	mu    sync.Mutex
	calls map[string]int
	fail  map[string]error
}

func (c *counting) graph(t *testing.T, cp graph.Checkpointer) *graph.Runnable[state] {
	t.Helper()
	g := graph.New[state]("pipeline")
	prev := graph.Start
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		g.AddNode(n, func(ctx context.Context, s state) (state, error) {
			c.mu.Lock()
			c.calls[n]++
			err := c.fail[n]
			c.mu.Unlock()
			if err != nil {
				return s, err
			}
			s.Visited = append(s.Visited, n)
			return s, nil
		})
		g.AddEdge(prev, n)
		prev = n
	}
	g.AddEdge(prev, graph.End)
	return mustCompile(t, g, graph.WithCheckpointer(cp))
}

func TestResumeAfterFailedNode(t *testing.T) {
	ctx := context.Background()
	cp := graph.NewMemoryCheckpointer()
	c := &counting{calls: map[string]int{}, fail: map[string]error{"n3": errors.New("transient")}}
	r := c.graph(t, cp)

	res, err := r.Run(ctx, "msg-1", state{})
	if err == nil {
		t.Fatal("first run succeeded, want node n3 to fail")
	}
	if diff := cmp.Diff([]string{"n1", "n2", "n3"}, nodes(res.Trace)); diff != "" {
		t.Errorf("first trace (-want +got):\n%s", diff)
	}

	c.fail = nil
	res, err = r.Run(ctx, "msg-1", state{Visited: []string{"ignored input"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed {
		t.Error("Resumed = false for a resumed run")
	}
	if diff := cmp.Diff([]string{"n1", "n2", "n3", "n4"}, res.State.Visited); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	// The failed step is not part of the saved trace; the retry is.
	if diff := cmp.Diff([]string{"n1", "n2", "n3", "n4"}, nodes(res.Trace)); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"n1": 1, "n2": 1, "n3": 2, "n4": 1}, c.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}

	// A finished run is not executed again.
	again, err := r.Run(ctx, "msg-1", state{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.State, again.State); diff != "" {
		t.Errorf("finished run state (-first +again):\n%s", diff)
	}
	if diff := cmp.Diff(res.Trace, again.Trace); diff != "" {
		t.Errorf("finished run trace (-first +again):\n%s", diff)
	}
	if !again.Resumed {
		t.Error("Resumed = false for a finished run")
	}
	if diff := cmp.Diff(map[string]int{"n1": 1, "n2": 1, "n3": 2, "n4": 1}, c.calls); diff != "" {
		t.Errorf("calls after re-running a finished run (-want +got):\n%s", diff)
	}

	// Another run id runs from its input.
	if _, err := r.Run(ctx, "msg-2", state{}); err != nil {
		t.Fatal(err)
	}
	if c.calls["n1"] != 2 {
		t.Errorf("n1 calls = %d, want 2 after a second run id", c.calls["n1"])
	}
	if diff := cmp.Diff([]string{"pipeline/msg-1", "pipeline/msg-2"}, cp.Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}

	// Forget makes the run start afresh.
	if err := r.Forget(ctx, "msg-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "msg-1", state{}); err != nil {
		t.Fatal(err)
	}
	if c.calls["n1"] != 3 {
		t.Errorf("n1 calls = %d, want 3 after Forget", c.calls["n1"])
	}
}

func TestResumeAfterCrash(t *testing.T) {
	cp := graph.NewMemoryCheckpointer()
	c := &counting{calls: map[string]int{}}
	// The "process" dies right after node n2 completes: its context is
	// cancelled, so nothing after n2 runs.
	crashCtx, crash := context.WithCancel(context.Background())
	defer crash()
	var r *graph.Runnable[state]
	{
		g := graph.New[state]("pipeline")
		prev := graph.Start
		for _, n := range []string{"n1", "n2", "n3", "n4"} {
			g.AddNode(n, func(_ context.Context, s state) (state, error) {
				c.calls[n]++
				if n == "n2" {
					crash()
				}
				s.Visited = append(s.Visited, n)
				return s, nil
			})
			g.AddEdge(prev, n)
			prev = n
		}
		g.AddEdge(prev, graph.End)
		r = mustCompile(t, g, graph.WithCheckpointer(cp))
	}
	if _, err := r.Run(crashCtx, "job-7", state{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the crash", err)
	}
	saved, ok, err := cp.Load(context.Background(), r.CheckpointKey("job-7"))
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if saved.Next != "n3" || saved.Done || saved.Graph != "pipeline" {
		t.Errorf("checkpoint = next %q done %v graph %q, want next n3, not done", saved.Next, saved.Done, saved.Graph)
	}

	// A new process: same graph, same checkpointer, same run id.
	res, err := r.Run(context.Background(), "job-7", state{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"n1": 1, "n2": 1, "n3": 1, "n4": 1}, c.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"n1", "n2", "n3", "n4"}, res.State.Visited); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if got := cp.Saves(); got != 4 {
		t.Errorf("saves = %d, want one per completed node (4)", got)
	}
}

func TestResumeCountsEarlierSteps(t *testing.T) {
	cp := graph.NewMemoryCheckpointer()
	c := &counting{calls: map[string]int{}, fail: map[string]error{"n4": errors.New("down")}}
	r := c.graph(t, cp)
	if _, err := r.Run(context.Background(), "x", state{}); err == nil {
		t.Fatal("want n4 to fail")
	}
	// Recompile the same graph with a lower limit: the three saved steps
	// count, so the fourth would exceed it.
	c.fail = nil
	g2 := graph.New[state]("pipeline")
	prev := graph.Start
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		g2.AddNode(n, visit(n))
		g2.AddEdge(prev, n)
		prev = n
	}
	g2.AddEdge(prev, graph.End)
	r2 := mustCompile(t, g2, graph.WithCheckpointer(cp), graph.WithStepLimit(3))
	_, err := r2.Run(context.Background(), "x", state{})
	var sl *graph.StepLimitError
	if !errors.As(err, &sl) || sl.Next != "n4" || len(sl.Trace) != 3 {
		t.Errorf("err = %v, want a step limit before n4 with 3 saved steps", err)
	}
}

func TestCheckpointErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("run id required", func(t *testing.T) {
		r := mustCompile(t, linear(t, "a"), graph.WithCheckpointer(graph.NewMemoryCheckpointer()))
		_, err := r.Run(ctx, "", state{})
		if memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("err = %v, want EINVALID", err)
		}
	})
	t.Run("state not encodable", func(t *testing.T) {
		ran := false
		g := graph.New[chan int]("chan")
		g.AddNode("a", func(_ context.Context, s chan int) (chan int, error) { ran = true; return s, nil })
		g.AddEdge(graph.Start, "a")
		g.AddEdge("a", graph.End)
		r, err := g.Compile(graph.WithCheckpointer(graph.NewMemoryCheckpointer()))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Run(ctx, "x", make(chan int))
		if err == nil || !strings.Contains(err.Error(), "cannot be checkpointed") {
			t.Errorf("err = %v, want a checkpoint encoding error", err)
		}
		if ran {
			t.Error("a node ran although the state cannot be checkpointed")
		}
	})
	t.Run("resume at a node that no longer exists", func(t *testing.T) {
		cp := graph.NewMemoryCheckpointer()
		r := mustCompile(t, linear(t, "a", "b"), graph.WithCheckpointer(cp))
		err := cp.Save(ctx, r.CheckpointKey("old"), graph.Checkpoint{Graph: "linear", Next: "removed", State: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Run(ctx, "old", state{})
		if err == nil || !strings.Contains(err.Error(), `resumes at unknown node "removed"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("save fails", func(t *testing.T) {
		r := mustCompile(t, linear(t, "a", "b"), graph.WithCheckpointer(failingSaver{}))
		res, err := r.Run(ctx, "x", state{})
		if err == nil || !strings.Contains(err.Error(), `save checkpoint before node "b": disk full`) {
			t.Errorf("err = %v", err)
		}
		if diff := cmp.Diff([]string{"a"}, nodes(res.Trace)); diff != "" {
			t.Errorf("trace (-want +got):\n%s", diff)
		}
	})
}

// failingSaver is a checkpointer whose saves fail.
type failingSaver struct{}

func (failingSaver) Load(context.Context, string) (*graph.Checkpoint, bool, error) {
	return nil, false, nil
}
func (failingSaver) Save(context.Context, string, graph.Checkpoint) error {
	return errors.New("disk full")
}
func (failingSaver) Delete(context.Context, string) error { return nil }

func TestConcurrentRuns(t *testing.T) {
	cp := graph.NewMemoryCheckpointer()
	r := mustCompile(t, linear(t, "a", "b", "c"), graph.WithCheckpointer(cp))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Go(func() {
			res, err := r.Run(context.Background(), fmt.Sprintf("run-%d", i), state{})
			if err == nil && len(res.State.Visited) != 3 {
				err = fmt.Errorf("run %d visited %v", i, res.State.Visited)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := len(cp.Keys()); got != 16 {
		t.Errorf("%d checkpoints, want 16", got)
	}
}

// everyOther is a Pacer that keeps every other save a run offers, and no
// save of a finished run.
type everyOther struct {
	*graph.MemoryCheckpointer
	asked int
}

func (e *everyOther) Due(done bool) bool {
	e.asked++
	return !done && e.asked%2 == 0
}

// encodeCounted is a state that counts its encodings.
type encodeCounted struct {
	Visited []string
	encodes *int
}

func (s encodeCounted) MarshalJSON() ([]byte, error) {
	*s.encodes++
	return json.Marshal(s.Visited)
}

// TestPacerSkipsEncoding runs five nodes with a checkpointer that keeps
// every other save: the state is encoded once to check it can be (before
// the first node) and once for each save kept, not after every node.
func TestPacerSkipsEncoding(t *testing.T) {
	g := graph.New[encodeCounted]("paced")
	prev := graph.Start
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		g.AddNode(n, func(_ context.Context, s encodeCounted) (encodeCounted, error) {
			s.Visited = append(s.Visited, n)
			return s, nil
		})
		g.AddEdge(prev, n)
		prev = n
	}
	g.AddEdge(prev, graph.End)
	cp := &everyOther{MemoryCheckpointer: graph.NewMemoryCheckpointer()}
	r, err := g.Compile(graph.WithCheckpointer(cp))
	if err != nil {
		t.Fatal(err)
	}
	var encodes int
	if _, err := r.Run(context.Background(), "x", encodeCounted{encodes: &encodes}); err != nil {
		t.Fatal(err)
	}
	// Asked after a, b, c, d (kept after b and d) and after e (done).
	if cp.asked != 5 || cp.Saves() != 2 {
		t.Errorf("asked %d times, saved %d, want 5 and 2", cp.asked, cp.Saves())
	}
	if encodes != 3 {
		t.Errorf("the state was encoded %d times, want 3 (the check and the two saves kept)", encodes)
	}
	saved, ok, err := cp.Load(context.Background(), r.CheckpointKey("x"))
	if err != nil || !ok || saved.Next != "e" || string(saved.State) != `["a","b","c","d"]` {
		t.Errorf("checkpoint = %+v, %v, %v; want the state after d, next e", saved, ok, err)
	}
}
