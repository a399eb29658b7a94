package http

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// web holds the page's templates and its static assets (CSS, JavaScript,
// icon). Everything the page needs is in the binary: no CDN, no build step.
//
//go:embed web
var web embed.FS

// UI is what the web page needs to render a user's conversations on the
// server. Everything else (chat, events, the memory inspector) the page
// reads from the JSON API with fetch.
type UI struct {
	Threads  memento.ThreadService
	Messages memento.MessageLog
	// Events, when set, marks the titles of the latest answer the user
	// already acted on (seen, liked, turned down), after a reload too.
	Events memento.EventService
	// Jobs, when set, lets the page see background work finish (a summary
	// written, a memory learned) and refresh what it shows without a
	// reload. Without it the page still works but refreshes only on
	// demand.
	Jobs memento.Queue
	// Speech, when set, shows a microphone button that records a message
	// and sends it to POST /v1/chat/audio.
	Speech bool
	// Study, when set, makes the page a study's conversation step
	// (experiment.go): only the participant's own conversation, with the
	// memory inspector hidden and a way on to the questionnaire.
	Study *Study
}

// Limits of what the server renders.
const (
	// uiMaxTurns bounds the messages a conversation shows on load.
	uiMaxTurns = 80
	// uiMaxThreads bounds the threads the sidebar lists.
	uiMaxThreads = 50
	// uiMaxIDLen bounds a user or thread id taken from the address.
	uiMaxIDLen = 128
	// uiDefaultUser is the user of a page that names none.
	uiDefaultUser = "me"
)

// RegisterUI adds the web page: GET / (the chat and memory inspector,
// rendered with html/template), GET /ui/threads and GET /ui/conversation
// (the same parts, rendered for the page to swap in), GET /ui/activity
// (whether background jobs are running, polled by the page) and GET
// /static/ (the embedded assets).
func RegisterUI(ui UI) func(api huma.API, s *Server) {
	return func(_ huma.API, s *Server) {
		h, err := newUIHandler(ui, s)
		if err != nil {
			// The assets are embedded and parsed in tests; a failure here is
			// a broken build, reported on every page request.
			s.Logger.Error("web UI is unavailable", "err", err)
			s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
				writeError(w, r, s.Logger, fmt.Errorf("load web UI: %w", err))
			})
			return
		}
		s.mux.HandleFunc("GET /{$}", h.page)
		s.mux.HandleFunc("GET /ui/threads", h.threadsPart)
		s.mux.HandleFunc("GET /ui/conversation", h.conversationPart)
		s.mux.HandleFunc("GET /ui/activity", h.activity)
		s.mux.Handle("GET /static/", h.staticHandler())
		s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, h.assets["favicon.svg"], http.StatusMovedPermanently)
		})
	}
}

// uiHandler serves the page and its parts.
type uiHandler struct {
	UI
	server *Server
	tmpl   *template.Template
	static fs.FS
	// assets maps a static file's name to its URL with a content hash,
	// which lets browsers cache it for good.
	assets map[string]string
	hashes map[string]string
}

func newUIHandler(ui UI, s *Server) (*uiHandler, error) {
	static, err := fs.Sub(web, "web/static")
	if err != nil {
		return nil, err
	}
	h := &uiHandler{UI: ui, server: s, static: static, assets: map[string]string{}, hashes: map[string]string{}}
	err = fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h.hashes[p] = hex.EncodeToString(sum[:6])
		h.assets[p] = "/static/" + p + "?v=" + h.hashes[p]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash static assets: %w", err)
	}
	h.tmpl, err = template.New("ui").Funcs(template.FuncMap{
		"asset":      func(name string) string { return h.assets[name] },
		"typeLabel":  TypeLabel,
		"isoTime":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"dayTime":    func(t time.Time) string { return t.UTC().Format("Jan 2, 15:04 UTC") },
		"pathEscape": url.PathEscape,
		// The blank parts are the <template> elements app.js clones for
		// content it receives, so the markup is written once.
		"blankTurn": func(user bool) turnView { return turnView{User: user} },
		"blankCard": func() cardView { return cardView{} },
		"blankChip": func() Chip { return Chip{Removable: true} },
	}).ParseFS(web, "web/templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse web templates: %w", err)
	}
	return h, nil
}

// pageView is what the page template renders.
type pageView struct {
	Version      string
	User         string
	Thread       string
	Threads      threadsView
	Conversation conversationView
	// Study is set on a study's conversation step.
	Study *studyChat
	// Speech shows the microphone button: a transcription server is
	// configured for POST /v1/chat/audio.
	Speech bool
}

// threadsView is the sidebar: a user's threads, the current one marked.
type threadsView struct {
	User    string
	Current string
	Threads []threadView
	Error   string
}

type threadView struct {
	ID      string
	Label   string
	Updated time.Time
	Current bool
}

// conversationView is one thread's conversation as the page shows it.
type conversationView struct {
	User   string
	Thread string
	// Earlier is true when older messages were left out.
	Earlier bool
	Turns   []turnView
	Error   string
}

type turnView struct {
	User   bool
	Text   string
	At     time.Time
	Cards  []cardView
	Chips  []Chip
	Latest bool
	// Notes and Memory come from the turn's stored answer: the agent's
	// notes and what the answer drew on.
	Notes  []string
	Memory []MemoryLine
	// Emotion is what a user's message expressed, when it was tagged.
	Emotion *memento.Emotion
}

// MemoryLine is one entry of an answer's "What Memento drew on": the
// kind of memory, in words, and what it said.
type MemoryLine struct {
	Kind string
	Text string
}

type cardView struct {
	ID       string
	Title    string
	Type     string
	Year     int
	Genres   []string
	Overview string
	Why      []string
	// What the user did about the title, from their events.
	Watched, Liked, Disliked bool
}

func (h *uiHandler) page(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var study *studyChat
	if h.Study != nil {
		var ok bool
		if study, ok = h.studyChat(w, r); !ok {
			return
		}
	}
	user, err := idParam(r, "user", uiDefaultUser)
	if err != nil {
		h.htmlError(w, r, err)
		return
	}
	thread, err := idParam(r, "thread", "")
	if err != nil {
		h.htmlError(w, r, err)
		return
	}
	sc := memento.Scope{Tenant: RequestTenant(r), User: user}
	threads := h.threads(ctx, sc, thread)
	if thread == "" {
		if len(threads.Threads) > 0 {
			thread = threads.Threads[0].ID
			threads.Threads[0].Current = true
		} else {
			thread = NewThreadID()
		}
		threads.Current = thread
	}
	v := pageView{
		Version:      h.server.Version,
		User:         user,
		Thread:       thread,
		Threads:      threads,
		Conversation: h.conversation(ctx, sc, thread),
		Study:        study,
		Speech:       h.Speech,
	}
	h.render(w, r, "page", v)
}

func (h *uiHandler) threadsPart(w http.ResponseWriter, r *http.Request) {
	user, err := idParam(r, "user", uiDefaultUser)
	if err != nil {
		writeError(w, r, h.server.Logger, err)
		return
	}
	thread, err := idParam(r, "thread", "")
	if err != nil {
		writeError(w, r, h.server.Logger, err)
		return
	}
	h.render(w, r, "threads", h.threads(r.Context(), memento.Scope{Tenant: RequestTenant(r), User: user}, thread))
}

func (h *uiHandler) conversationPart(w http.ResponseWriter, r *http.Request) {
	user, err := idParam(r, "user", uiDefaultUser)
	if err != nil {
		writeError(w, r, h.server.Logger, err)
		return
	}
	thread, err := idParam(r, "thread", "")
	if err != nil {
		writeError(w, r, h.server.Logger, err)
		return
	}
	if thread == "" {
		writeError(w, r, h.server.Logger, memento.Errorf(memento.EINVALID, "thread is required"))
		return
	}
	h.render(w, r, "conversation", h.conversation(r.Context(), memento.Scope{Tenant: RequestTenant(r), User: user}, thread))
}

// threads lists the user's threads for the sidebar, each labelled with
// its first message. A store failure is shown in the sidebar, not as a
// broken page.
func (h *uiHandler) threads(ctx context.Context, sc memento.Scope, current string) threadsView {
	v := threadsView{User: sc.User, Current: current, Threads: []threadView{}}
	ts, err := h.Threads.Threads(ctx, sc)
	if err != nil {
		h.server.Logger.ErrorContext(ctx, "list threads for the web UI", "user", sc.User, "err", err)
		v.Error = "Your conversations could not be loaded: " + memento.ErrorMessage(err)
		return v
	}
	if len(ts) > uiMaxThreads {
		ts = ts[:uiMaxThreads]
	}
	for _, t := range ts {
		tv := threadView{ID: t.ID, Label: t.ID, Updated: t.UpdatedAt, Current: t.ID == current}
		if h.Messages != nil {
			first, err := h.Messages.Messages(ctx, sc, t.ID, 0, 1)
			if err == nil && len(first) > 0 {
				tv.Label = Excerpt(first[0].Text, 60)
			}
		}
		v.Threads = append(v.Threads, tv)
	}
	return v
}

// conversation renders a thread's recent messages. Each answer the
// thread stored shows its cards with their reasons, its notes and what it
// drew on, as it did when it was given; an answer stored before answers
// were kept shows its text only. The latest answer's chips are the
// active context the next turn starts from, and can be removed.
func (h *uiHandler) conversation(ctx context.Context, sc memento.Scope, thread string) conversationView {
	v := conversationView{User: sc.User, Thread: thread, Turns: []turnView{}}
	st, err := h.Threads.ThreadState(ctx, sc, thread)
	if err != nil {
		h.server.Logger.ErrorContext(ctx, "load thread for the web UI", "user", sc.User, "thread", thread, "err", err)
		v.Error = "This conversation could not be loaded: " + memento.ErrorMessage(err)
		return v
	}
	if st.LastSeq == 0 || h.Messages == nil {
		return v
	}
	after := max(st.LastSeq-uiMaxTurns, 0)
	v.Earlier = after > 0
	msgs, err := h.Messages.Messages(ctx, sc, thread, after, 0)
	if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		h.server.Logger.ErrorContext(ctx, "load messages for the web UI", "user", sc.User, "thread", thread, "err", err)
		v.Error = "The messages could not be loaded: " + memento.ErrorMessage(err)
		return v
	}
	answers := h.answers(ctx, sc, thread)
	latest, latestStored := -1, false
	for _, m := range msgs {
		t := turnView{User: m.Role == memento.RoleUser, Text: m.Text, At: m.At, Emotion: m.Emotion}
		if !t.User {
			a, ok := answers[m.ID]
			if ok {
				fillTurn(&t, a)
			}
			latest, latestStored = len(v.Turns), ok
		}
		v.Turns = append(v.Turns, t)
	}
	if latest >= 0 {
		// The newest answer's chips are the context the next turn starts
		// from, which the user may have edited since. Without a stored
		// answer its titles come back from the catalog, without reasons.
		t := &v.Turns[latest]
		t.Latest = true
		t.Chips = Chips(st.Context)
		if !latestStored {
			t.Cards = h.shownCards(ctx, st.LastShown)
			t.Text = StripTitleList(t.Text, cardTitles(t.Cards))
		}
	}
	var cards []*cardView
	for i := range v.Turns {
		for j := range v.Turns[i].Cards {
			cards = append(cards, &v.Turns[i].Cards[j])
		}
	}
	h.markActions(ctx, sc, cards)
	return v
}

// answers returns the thread's stored answers by the id of their message.
// A failure only costs the cards of earlier turns, so it is logged, not
// shown.
func (h *uiHandler) answers(ctx context.Context, sc memento.Scope, thread string) map[string]agent.Response {
	out := map[string]agent.Response{}
	stored, err := h.Threads.Answers(ctx, sc, thread, uiMaxTurns)
	if err != nil {
		h.server.Logger.WarnContext(ctx, "load stored answers for the web UI", "user", sc.User, "thread", thread, "err", err)
		return out
	}
	for _, a := range decodeAnswers(ctx, h.server, stored) {
		out[a.Message] = a.Answer
	}
	return out
}

// fillTurn shows a stored answer in its turn as app.js shows a fresh one
// (fillAnswer): cards with reasons, the context it searched (a record, not
// removable), notes and the memory it drew on.
func fillTurn(t *turnView, a agent.Response) {
	for _, r := range a.Titles {
		t.Cards = append(t.Cards, cardView{ID: r.ID, Title: r.Title, Type: r.Type, Year: r.Year,
			Genres: r.Genres, Overview: r.Overview, Why: r.Why})
	}
	t.Text = StripTitleList(t.Text, cardTitles(t.Cards))
	for _, c := range Chips(a.ActiveContext) {
		c.Record = true
		t.Chips = append(t.Chips, c)
	}
	t.Notes = a.Notes
	t.Memory = MemoryItems(a.Memory)
}

// MemoryItems lists what an answer drew on, as "What Memento drew on"
// shows it: the summary, then each memory used. A used item that repeats
// the summary is shown once. app.js renders the same list for answers it
// receives; keep the two in step.
func MemoryItems(m agent.MemoryUsed) []MemoryLine {
	var out []MemoryLine
	if m.Summary != "" {
		out = append(out, MemoryLine{Kind: "Summary", Text: m.Summary})
	}
	for _, u := range m.Used {
		if u.Kind == "summary" && u.Text == m.Summary {
			continue
		}
		text := u.Text
		if text == "" {
			text = u.ID
		}
		kind := u.Kind
		if kind == "" {
			kind = "memory"
		}
		out = append(out, MemoryLine{Kind: humanize(kind), Text: text})
	}
	return out
}

// humanize turns a kind into words: "profile_key" → "Profile key".
func humanize(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case i > 0 && unicode.IsUpper(r):
			b.WriteByte(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	w := strings.TrimSpace(b.String())
	r, size := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[size:]
}

// shownCards are the cards of titles shown, looked up in the catalog.
func (h *uiHandler) shownCards(ctx context.Context, ids []string) []cardView {
	var out []cardView
	for _, id := range ids {
		if h.server.Catalog == nil {
			break
		}
		title, err := h.server.Catalog.Title(ctx, id)
		if err != nil {
			continue
		}
		out = append(out, cardView{ID: title.ID, Title: title.Title, Type: title.Type, Year: title.Year,
			Genres: title.Genres, Overview: FirstSentence(title.Overview), Why: []string{}})
	}
	return out
}

func cardTitles(cards []cardView) []string {
	out := make([]string, len(cards))
	for i, c := range cards {
		out[i] = c.Title
	}
	return out
}

// markActions sets what the user did about each card's title, the newest
// of liked and disliked counting.
func (h *uiHandler) markActions(ctx context.Context, sc memento.Scope, cards []*cardView) {
	if h.Events == nil || len(cards) == 0 {
		return
	}
	events, err := h.Events.Events(ctx, sc)
	if err != nil {
		h.server.Logger.WarnContext(ctx, "list events for the web UI", "user", sc.User, "err", err)
		return
	}
	// A title shown in several answers is marked on each of its cards.
	index := map[string][]*cardView{}
	for _, c := range cards {
		index[c.ID] = append(index[c.ID], c)
	}
	for _, e := range events {
		for _, c := range index[e.TitleID] {
			switch e.Type {
			case memento.EventWatched, memento.EventFinished:
				c.Watched = true
			case memento.EventLiked:
				c.Liked, c.Disliked = true, false
			case memento.EventDisliked:
				c.Liked, c.Disliked = false, true
			}
		}
	}
}

// activity reports the background work the page waits for. Latest is the
// id of the newest job and Unfinished counts jobs not yet ended, so a
// change of either means memory may have changed. Only counts leave the
// server: which jobs run, and for whom, is not shown.
func (h *uiHandler) activity(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Live       bool  `json:"live"`
		Unfinished int   `json:"unfinished"`
		Latest     int64 `json:"latest"`
	}{}
	if h.Jobs != nil {
		ctx := r.Context()
		n, err := h.Jobs.Unfinished(ctx)
		if err != nil {
			writeError(w, r, h.server.Logger, fmt.Errorf("count unfinished jobs: %w", err))
			return
		}
		jobs, err := h.Jobs.Jobs(ctx, memento.JobFilter{Limit: 1})
		if err != nil {
			writeError(w, r, h.server.Logger, fmt.Errorf("find the newest job: %w", err))
			return
		}
		out.Live, out.Unfinished = true, n
		if len(jobs) > 0 {
			out.Latest = jobs[0].ID
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// staticHandler serves the embedded assets. A request that names the current
// content hash (as the page's links do) may be cached for good; any other
// is revalidated.
func (h *uiHandler) staticHandler() http.Handler {
	files := http.StripPrefix("/static/", http.FileServerFS(h.static))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		hash, ok := h.hashes[name]
		if !ok {
			writeError(w, r, h.server.Logger, memento.Errorf(memento.ENOTFOUND, "no static file %q", name))
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("ETag", `"`+hash+`"`)
		if r.URL.Query().Get("v") == hash {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}

// render executes a template into a buffer first, so a failure gives a
// clean error response rather than half a page.
func (h *uiHandler) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		h.htmlError(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	setPageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// htmlError renders an error for a person reading the page.
func (h *uiHandler) htmlError(w http.ResponseWriter, r *http.Request, err error) {
	code := memento.ErrorCode(err)
	if code == memento.EINTERNAL {
		h.server.Logger.ErrorContext(r.Context(), "web UI request failed", "err", err)
	}
	var buf bytes.Buffer
	if terr := h.tmpl.ExecuteTemplate(&buf, "error", struct {
		Status  int
		Message string
	}{StatusFor(code), memento.ErrorMessage(err)}); terr != nil {
		writeError(w, r, h.server.Logger, err)
		return
	}
	setPageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(StatusFor(code))
	_, _ = w.Write(buf.Bytes())
}

// setPageHeaders keeps the page to its own origin: scripts and styles come
// from /static only, so text a user or a model wrote can never run.
func setPageHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Cache-Control", "no-store")
}

// idParam reads a user or thread id from the query: trimmed, at most
// uiMaxIDLen bytes, printable.
func idParam(r *http.Request, name, def string) (string, error) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return def, nil
	}
	if len(v) > uiMaxIDLen {
		return "", memento.Errorf(memento.EINVALID, "%s must be at most %d bytes, got %d", name, uiMaxIDLen, len(v))
	}
	if !utf8.ValidString(v) || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "", memento.Errorf(memento.EINVALID, "%s %q has characters that are not printable", name, v)
	}
	return v, nil
}

// NewThreadID makes an id for a new conversation: "t-" and 12 random hex
// digits. The web page makes its own the same way.
func NewThreadID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t-" + hex.EncodeToString(b[:])
}

// Chip is one constraint of an active context as the page shows it: a
// label and, when the user may remove it, the field and value that
// removing it clears.
type Chip struct {
	// Field is the ActiveContext field ("genres", "excludedGenres",
	// "titleType", "minYear", "maxYear", "people", "freeText", "isAdult",
	// "count", "excludedTitleIds").
	Field string
	// Value is the list element to remove, for list fields.
	Value string
	Label string
	// Removable is false for the count, which always has a value.
	Removable bool
	// Record is true for the chips of an earlier answer: they show what
	// it searched, and removing them would change nothing.
	Record bool
}

// Chips lists the constraints of an active context in the order the page
// shows them. app.js renders the same chips for answers it receives; keep
// the two in step.
func Chips(ac memento.ActiveContext) []Chip {
	var out []Chip
	for _, g := range ac.Genres {
		out = append(out, Chip{Field: "genres", Value: g, Label: g, Removable: true})
	}
	for _, g := range ac.ExcludedGenres {
		out = append(out, Chip{Field: "excludedGenres", Value: g, Label: "no " + g, Removable: true})
	}
	if ac.TitleType != "" {
		out = append(out, Chip{Field: "titleType", Label: typePlural(ac.TitleType) + " only", Removable: true})
	}
	if ac.MinYear != nil {
		out = append(out, Chip{Field: "minYear", Label: "from " + strconv.Itoa(*ac.MinYear), Removable: true})
	}
	if ac.MaxYear != nil {
		out = append(out, Chip{Field: "maxYear", Label: "until " + strconv.Itoa(*ac.MaxYear), Removable: true})
	}
	for _, p := range ac.People {
		out = append(out, Chip{Field: "people", Value: p, Label: "with " + p, Removable: true})
	}
	if ac.FreeText != "" {
		out = append(out, Chip{Field: "freeText", Label: "about “" + ac.FreeText + "”", Removable: true})
	}
	if ac.IsAdult {
		out = append(out, Chip{Field: "isAdult", Label: "adult titles", Removable: true})
	}
	if n := len(ac.ExcludedTitleIDs); n > 0 {
		label := strconv.Itoa(n) + " titles excluded"
		if n == 1 {
			label = "1 title excluded"
		}
		out = append(out, Chip{Field: "excludedTitleIds", Label: label, Removable: true})
	}
	if ac.Count > 0 {
		out = append(out, Chip{Field: "count", Label: strconv.Itoa(ac.Count) + " at a time"})
	}
	return out
}

// TypeLabel names a catalog title type for people ("movie" → "Movie",
// "tvSeries" → "TV series").
func TypeLabel(t string) string {
	switch t {
	case memento.TypeMovie:
		return "Movie"
	case memento.TypeTVSeries:
		return "TV series"
	case "tvMiniSeries":
		return "TV mini-series"
	case "tvMovie":
		return "TV movie"
	case "short":
		return "Short"
	case "":
		return "Title"
	}
	return t
}

// typePlural names many titles of a type, as a chip does ("Movies only").
func typePlural(t string) string {
	switch l := TypeLabel(t); {
	case strings.HasSuffix(l, "series"):
		return l
	default:
		return l + "s"
	}
}

// Excerpt shortens text to at most n runes on a word boundary, with an
// ellipsis when something was cut.
func Excerpt(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-") + "…"
}

// FirstSentence returns the first sentence of a plot, as cards show it.
func FirstSentence(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '.' && (i+1 == len(s) || s[i+1] == ' ') && i > 20 {
			return s[:i+1]
		}
	}
	return s
}

var listLine = regexp.MustCompile(`^\s*\d+[.)]\s`)

// StripTitleList removes from a reply the numbered lines that name a
// title the answer shows as a card, so the page does not say everything
// twice. Other lines are kept as they are.
func StripTitleList(reply string, titles []string) string {
	if len(titles) == 0 {
		return reply
	}
	var keep []string
	for _, line := range strings.Split(reply, "\n") {
		if listLine.MatchString(line) && namesAny(line, titles) {
			continue
		}
		keep = append(keep, line)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

func namesAny(line string, titles []string) bool {
	for _, t := range titles {
		if t != "" && strings.Contains(line, t) {
			return true
		}
	}
	return false
}
