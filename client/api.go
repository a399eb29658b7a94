package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/recall"
)

// Health checks that the server and its dependencies answer (GET
// /healthz). Errors: EUNAVAILABLE naming the dependency down.
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/healthz", out: &struct{}{}})
	return err
}

// Ready checks that the server is ready for traffic (GET /readyz): its
// dependencies answer and its start-up work (the title vectors chat turns
// rank with) has ended. A server still warming answers 503 with
// Retry-After, which the retry policy waits out a few times before the
// error returns. Errors: EUNAVAILABLE naming what is warming or down.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/readyz", out: &struct{}{}})
	return err
}

// Chat sends one message to the recommendation agent (POST /v1/chat) and
// returns its answer: the reply, titles with their reasons and the active
// context it used. Errors: EINVALID, EUPSTREAM, EUNAVAILABLE.
func (c *Client) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	var out agent.Response
	if _, err := c.do(ctx, request{method: http.MethodPost, path: path("chat"), body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Threads lists a user's threads, most recent first.
func (c *Client) Threads(ctx context.Context, user string) ([]memento.Thread, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out struct {
		Threads []memento.Thread `json:"threads"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "threads"), out: &out})
	return out.Threads, err
}

// Thread is a thread's active context, the titles its last answer showed
// and its messages (GET /v1/users/{user}/threads/{thread}).
type Thread struct {
	Thread        string                `json:"thread"`
	ActiveContext memento.ActiveContext `json:"activeContext"`
	LastShown     []string              `json:"lastShown"`
	Messages      []memento.Message     `json:"messages"`
}

// Thread returns one thread of a user.
func (c *Client) Thread(ctx context.Context, user, thread string) (*Thread, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out Thread
	if _, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "threads", thread), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetThreadContext replaces a thread's active context, as removing a
// constraint in the web UI does, and returns it. Errors: ENOTFOUND,
// EINVALID.
func (c *Client) SetThreadContext(ctx context.Context, user, thread string, ac memento.ActiveContext) (*memento.ActiveContext, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out memento.ActiveContext
	if _, err := c.do(ctx, request{method: http.MethodPut, path: userPath(user, "threads", thread, "context"), body: ac, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Summaries lists a thread's rolling summaries, oldest first.
func (c *Client) Summaries(ctx context.Context, user, thread string) ([]memento.Summary, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out struct {
		Summaries []memento.Summary `json:"summaries"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: path("threads", seg(thread), "summaries"), query: url.Values{"user": {user}}, out: &out})
	return out.Summaries, err
}

// Message is one message posted to the message log. ID, when set, makes
// the post idempotent; At defaults to the time the server stores it.
type Message struct {
	ID   string       `json:"id,omitempty"`
	Role memento.Role `json:"role"`
	Text string       `json:"text"`
	At   time.Time    `json:"at,omitzero"`
}

// AppendMessages stores messages in a thread's log with their background
// jobs (the attribute pipeline, preferences, the recall index) and returns
// once both are durable; it never waits for the jobs. A message whose id
// is stored already is left as it is. Errors: EINVALID, ECONFLICT (an id
// used by another message), ETOOLARGE.
func (c *Client) AppendMessages(ctx context.Context, user, thread string, msgs ...Message) (*memento.AppendResult, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out memento.AppendResult
	if _, err := c.do(ctx, request{method: http.MethodPost, path: userPath(user, "threads", thread, "messages"), body: msgs, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// MemoryFilter selects the memories Memories lists; the zero value lists
// every current memory.
type MemoryFilter struct {
	Kind      string // memento.MemoryAttribute or memento.MemoryEpisode
	Attribute string // such as LIKES
	Thread    string
	All       bool // include superseded values
	Limit     int  // 0: all
}

// Memories lists what attribute memory knows about a user.
func (c *Client) Memories(ctx context.Context, user string, f MemoryFilter) ([]memento.Memory, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("kind", f.Kind)
	set("attribute", f.Attribute)
	set("thread", f.Thread)
	if f.All {
		q.Set("all", "true")
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out struct {
		Memories []memento.Memory `json:"memories"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "memories"), query: q, out: &out})
	return out.Memories, err
}

// Memory returns one memory. Errors: ENOTFOUND.
func (c *Client) Memory(ctx context.Context, user, id string) (*memento.Memory, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out memento.Memory
	if _, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "memories", id), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// MemoryHistory lists every version of a memory's value, newest first.
// Errors: ENOTFOUND.
func (c *Client) MemoryHistory(ctx context.Context, user, id string) ([]memento.Memory, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out struct {
		Memories []memento.Memory `json:"memories"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "memories", id, "history"), out: &out})
	return out.Memories, err
}

// UpdateMemory replaces a memory's value; a current value keeps its id and
// its old value joins its history. Errors: ENOTFOUND, EINVALID, ECONFLICT
// (a superseded value).
func (c *Client) UpdateMemory(ctx context.Context, user, id, value string) (*memento.Memory, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out memento.Memory
	if _, err := c.do(ctx, request{method: http.MethodPatch, path: userPath(user, "memories", id), body: memento.MemoryUpdate{Value: value}, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteMemory forgets a memory and the versions it superseded. Errors:
// ENOTFOUND.
func (c *Client) DeleteMemory(ctx context.Context, user, id string) error {
	if err := checkUser(user); err != nil {
		return err
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: userPath(user, "memories", id)})
	return err
}

// Runs lists the attribute pipeline's runs over a user's messages, newest
// first, at most limit (0: the server's default).
func (c *Client) Runs(ctx context.Context, user string, limit int) ([]memento.MemoryRun, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Runs []memento.MemoryRun `json:"runs"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "runs"), query: q, out: &out})
	return out.Runs, err
}

// ContextQuery is what a context document is assembled for.
type ContextQuery struct {
	Thread string // adds the thread's active context and latest summary
	Query  string // what the prompt is about
	K      int    // relevant items, 1 to 100 (0: the server's default)
}

// Context assembles everything a prompt needs about a user (GET
// /v1/users/{user}/context): the thread's context and summary, current
// attributes, relevant memories with their score breakdown and sources,
// and the rendered text. Errors: EINVALID.
func (c *Client) Context(ctx context.Context, user string, q ContextQuery) (*recall.Context, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	v := url.Values{}
	if q.Thread != "" {
		v.Set("thread", q.Thread)
	}
	if q.Query != "" {
		v.Set("query", q.Query)
	}
	if q.K > 0 {
		v.Set("k", strconv.Itoa(q.K))
	}
	var out recall.Context
	if _, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "context"), query: v, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Event is an action a user took on a catalog title, as posted. Value is
// the rating (0.5 to 5) for rated and the fraction watched for abandoned.
// ID makes the post idempotent; At defaults to now.
type Event struct {
	ID      string            `json:"id,omitempty"`
	Type    memento.EventType `json:"type"`
	TitleID string            `json:"title"`
	Value   *float64          `json:"value,omitempty"`
	At      time.Time         `json:"at,omitzero"`
}

// EventsResult counts what AddEvents stored.
type EventsResult struct {
	Received   int `json:"received"`
	Inserted   int `json:"inserted"`
	Duplicates int `json:"duplicates"`
}

// AddEvents records what a user did; the profile is learned again in the
// background. Errors: EINVALID (naming the event and field), ETOOLARGE.
func (c *Client) AddEvents(ctx context.Context, user string, events ...Event) (*EventsResult, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out EventsResult
	if _, err := c.do(ctx, request{method: http.MethodPost, path: userPath(user, "events"), body: events, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Events lists a user's events in the order they happened.
func (c *Client) Events(ctx context.Context, user string) ([]memento.Event, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out struct {
		Events []memento.Event `json:"events"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "events"), out: &out})
	return out.Events, err
}

// Profile returns a user's key-value profile; its Version is what
// UpdateProfile's ifVersion compares with.
func (c *Client) Profile(ctx context.Context, user string) (*memento.Profile, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out memento.Profile
	if _, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "profile"), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProfileChange is a change of the keys a user set: Set gives keys their
// values (marked source user), Delete removes keys. IfVersion, when set,
// makes the change fail with ECONFLICT unless the profile still has that
// version.
type ProfileChange struct {
	Set       map[string]any
	Delete    []string
	IfVersion *int64
}

// UpdateProfile sets and deletes profile keys (PATCH) and returns the new
// profile. Errors: EINVALID (a value of the wrong shape), ECONFLICT.
func (c *Client) UpdateProfile(ctx context.Context, user string, ch ProfileChange) (*memento.Profile, error) {
	keys := map[string]any{}
	for k, v := range ch.Set {
		keys[k] = v
	}
	for _, k := range ch.Delete {
		keys[k] = nil
	}
	return c.writeProfile(ctx, http.MethodPatch, user, keys, ch.IfVersion)
}

// ReplaceProfile makes keys the only keys the user set (PUT); learned
// keys stay. Errors: EINVALID, ECONFLICT.
func (c *Client) ReplaceProfile(ctx context.Context, user string, keys map[string]any, ifVersion *int64) (*memento.Profile, error) {
	if keys == nil {
		keys = map[string]any{}
	}
	return c.writeProfile(ctx, http.MethodPut, user, keys, ifVersion)
}

func (c *Client) writeProfile(ctx context.Context, method, user string, keys map[string]any, ifVersion *int64) (*memento.Profile, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var h http.Header
	if ifVersion != nil {
		h = http.Header{"If-Match": {`"` + strconv.FormatInt(*ifVersion, 10) + `"`}}
	}
	var out memento.Profile
	body := struct {
		Keys map[string]any `json:"keys"`
	}{keys}
	if _, err := c.do(ctx, request{method: method, path: userPath(user, "profile"), body: body, header: h, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Preferences lists a user's preference memories, strongest first.
func (c *Client) Preferences(ctx context.Context, user string) ([]memento.Preference, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out []memento.Preference
	_, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "preferences"), out: &out})
	return out, err
}

// PreferenceClusters lists a user's preference clusters, most confident
// first.
func (c *Client) PreferenceClusters(ctx context.Context, user string) ([]memento.PreferenceCluster, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out []memento.PreferenceCluster
	_, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "preference-clusters"), out: &out})
	return out, err
}

// PreferencePatch changes a preference: its signed weight (-3 to 3) or
// its concept.
type PreferencePatch struct {
	Weight  *float64 `json:"weight,omitempty"`
	Concept *string  `json:"concept,omitempty"`
}

// UpdatePreference changes a preference and returns it. Errors: EINVALID,
// ENOTFOUND.
func (c *Client) UpdatePreference(ctx context.Context, user, id string, p PreferencePatch) (*memento.Preference, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out memento.Preference
	if _, err := c.do(ctx, request{method: http.MethodPatch, path: userPath(user, "preferences", id), body: p, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePreference forgets a preference. Errors: ENOTFOUND.
func (c *Client) DeletePreference(ctx context.Context, user, id string) error {
	if err := checkUser(user); err != nil {
		return err
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: userPath(user, "preferences", id)})
	return err
}

// Export returns everything Memento keeps about a user as one document.
// Errors: ENOTFOUND.
func (c *Client) Export(ctx context.Context, user string) (*memento.UserExport, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	var out memento.UserExport
	if _, err := c.do(ctx, request{method: http.MethodGet, path: userPath(user, "export"), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Import stores an export document under user; rows stored already are
// skipped. Errors: EINVALID (a document holding instructions to the
// model is refused whole).
func (c *Client) Import(ctx context.Context, user string, doc *memento.UserExport) (*memento.ImportResult, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "encode the export document: %v", err)
	}
	var out memento.ImportResult
	if _, err := c.do(ctx, request{method: http.MethodPost, path: userPath(user, "import"), body: json.RawMessage(raw), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Forget deletes everything about a user: threads, messages, summaries,
// events, memories, preferences, profile and pending jobs (DELETE
// /v1/users/{user}). Errors: ENOTFOUND.
func (c *Client) Forget(ctx context.Context, user string) error {
	if err := checkUser(user); err != nil {
		return err
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: userPath(user)})
	return err
}
