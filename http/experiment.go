package http

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/experiment"
)

// Study turns the web UI into a between-subjects study (memento serve
// --experiment NAME): GET / starts at the consent page, then the
// demographics, then the existing chat as the participant's own user (in
// their arm's memory mode, which the page never names: the memory
// inspector and what an answer drew on are hidden), then the
// questionnaire. Set it on UI.Study and register RegisterStudy.
//
// The steps post JSON (study.js sends the forms), as every write to the
// server must (guard.go). A cookie holds the participant's id, so a
// reload resumes where they were.
type Study struct {
	Store experiment.Store
	// Name is the study's name.
	Name string
	// Tenant is the tenant participants' users are created in.
	Tenant string
	// Assign picks the arm of a new participant; nil is
	// experiment.Balanced.
	Assign func(experiment.Study, map[string]int) experiment.Arm
	// MinMessages is how many messages a participant sends before the
	// questionnaire opens (at least 1).
	MinMessages int
}

// studyCookie holds the participant id.
const studyCookie = "memento_study"

// studyPage is what study.html renders.
type studyPage struct {
	Version string
	Study   string
	// Step is consent, demographics, questionnaire, early (the
	// questionnaire asked for before the conversation) or done.
	Step        string
	Instrument  experiment.Instrument
	Genders     []string
	MinAge      int
	MaxAge      int
	Familiarity []int
	MinMessages int
	ChatURL     string
}

// studyChat is what the chat page needs in a study: where the
// questionnaire is.
type studyChat struct {
	Name          string
	Questionnaire string
	MinMessages   int
}

// RegisterStudy adds the study's pages and their JSON steps: GET /study
// (the participant's current step), POST /study/consent,
// /study/demographics and /study/questionnaire (each answers {"next": URL}),
// and GET /study/questionnaire.
func RegisterStudy(st *Study) func(api huma.API, s *Server) {
	return func(_ huma.API, s *Server) {
		if st.Assign == nil {
			st.Assign = experiment.Balanced(nil)
		}
		if st.MinMessages < 1 {
			st.MinMessages = 1
		}
		h, err := newUIHandler(UI{}, s)
		if err != nil {
			s.Logger.Error("study pages are unavailable", "err", err)
			return
		}
		sh := &studyHandler{Study: st, ui: h, server: s}
		s.mux.HandleFunc("GET /study", sh.page(sh.current))
		s.mux.HandleFunc("GET /study/questionnaire", sh.page(sh.questionnaire))
		s.mux.HandleFunc("POST /study/consent", sh.step(sh.consent))
		s.mux.HandleFunc("POST /study/demographics", sh.step(sh.demographics))
		s.mux.HandleFunc("POST /study/questionnaire", sh.step(sh.answers))
	}
}

type studyHandler struct {
	*Study
	ui     *uiHandler
	server *Server
}

// page adapts a page handler that returns the view or an error.
func (h *studyHandler) page(fn func(w http.ResponseWriter, r *http.Request) (*studyPage, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(w, r)
		if err != nil {
			h.ui.htmlError(w, r, err)
			return
		}
		if v == nil {
			return // redirected
		}
		h.ui.render(w, r, "study", v)
	}
}

// step adapts a JSON step that returns the URL to go to next.
func (h *studyHandler) step(fn func(w http.ResponseWriter, r *http.Request, body []byte) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, r, h.server.Logger, memento.WrapError(memento.EINVALID, err, "the request body could not be read"))
			return
		}
		next, err := fn(w, r, body)
		if err != nil {
			writeError(w, r, h.server.Logger, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, map[string]string{"next": next})
	}
}

func (h *studyHandler) view(ctx context.Context, step string) (*studyPage, error) {
	s, err := h.Store.Study(ctx, h.Name)
	if err != nil {
		return nil, err
	}
	return &studyPage{Version: h.server.Version, Study: s.Name, Step: step, Instrument: s.Instrument,
		Genders: experiment.Genders, MinAge: experiment.MinAge, MaxAge: experiment.MaxAge,
		Familiarity: []int{1, 2, 3, 4, 5, 6, 7}, MinMessages: h.MinMessages}, nil
}

// participant is the participant the request's cookie names, or nil.
func (h *studyHandler) participant(r *http.Request) (*experiment.Participant, error) {
	return participantOf(r, h.Study)
}

func participantOf(r *http.Request, st *Study) (*experiment.Participant, error) {
	c, err := r.Cookie(studyCookie)
	if err != nil || c.Value == "" || len(c.Value) > uiMaxIDLen {
		return nil, nil
	}
	p, err := st.Store.Participant(r.Context(), st.Name, c.Value)
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		// A cookie of another study, or of a deleted one: start afresh.
		return nil, nil
	}
	return p, err
}

// chatURL is the chat page of a participant.
func chatURL(p *experiment.Participant) string {
	return "/?user=" + p.User + "&thread=" + p.Thread
}

// current renders the participant's step, or sends them to the chat.
func (h *studyHandler) current(w http.ResponseWriter, r *http.Request) (*studyPage, error) {
	p, err := h.participant(r)
	if err != nil {
		return nil, err
	}
	step := "consent"
	if p != nil {
		switch p.Stage {
		case experiment.StageDemographics:
			step = "demographics"
		case experiment.StageConversation:
			http.Redirect(w, r, chatURL(p), http.StatusSeeOther)
			return nil, nil
		default:
			step = "done"
		}
	}
	return h.view(r.Context(), step)
}

func (h *studyHandler) questionnaire(w http.ResponseWriter, r *http.Request) (*studyPage, error) {
	p, err := h.participant(r)
	if err != nil {
		return nil, err
	}
	if p == nil || p.Stage != experiment.StageConversation {
		http.Redirect(w, r, "/study", http.StatusSeeOther)
		return nil, nil
	}
	step := "questionnaire"
	if p.Messages < h.MinMessages {
		step = "early"
	}
	v, err := h.view(r.Context(), step)
	if v != nil {
		v.ChatURL = chatURL(p)
	}
	return v, err
}

func decodeStep(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return memento.WrapError(memento.EINVALID, err, "the answers could not be read: %v", err)
	}
	return nil
}

func (h *studyHandler) consent(w http.ResponseWriter, r *http.Request, body []byte) (string, error) {
	var in struct {
		Consent bool `json:"consent"`
	}
	if err := decodeStep(body, &in); err != nil {
		return "", err
	}
	if !in.Consent {
		return "", memento.Errorf(memento.EINVALID, "please tick the box to consent, or close the page to leave the study")
	}
	p, err := h.participant(r)
	if err != nil {
		return "", err
	}
	if p == nil {
		p, err = h.Store.Enroll(r.Context(), h.Name, h.Tenant, h.Assign)
		if err != nil {
			return "", err
		}
		http.SetCookie(w, &http.Cookie{Name: studyCookie, Value: p.ID, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	return "/study", nil
}

func (h *studyHandler) demographics(w http.ResponseWriter, r *http.Request, body []byte) (string, error) {
	var d experiment.Demographics
	if err := decodeStep(body, &d); err != nil {
		return "", err
	}
	p, err := h.participant(r)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", memento.Errorf(memento.ECONFLICT, "consent first: the study starts at /study")
	}
	p, err = h.Store.SaveDemographics(r.Context(), h.Name, p.ID, d)
	if err != nil {
		return "", err
	}
	return chatURL(p), nil
}

func (h *studyHandler) answers(w http.ResponseWriter, r *http.Request, body []byte) (string, error) {
	var in struct {
		Answers map[string]int `json:"answers"`
	}
	if err := decodeStep(body, &in); err != nil {
		return "", err
	}
	p, err := h.participant(r)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", memento.Errorf(memento.ECONFLICT, "consent first: the study starts at /study")
	}
	if p.Messages < h.MinMessages {
		return "", memento.Errorf(memento.ECONFLICT, "talk to the agent first: the questionnaire is about the conversation")
	}
	s, err := h.Store.Study(r.Context(), h.Name)
	if err != nil {
		return "", err
	}
	values := make([]int, len(s.Instrument.Items))
	var missing []string
	for i, it := range s.Instrument.Items {
		v, ok := in.Answers[it.ID]
		if !ok {
			missing = append(missing, it.ID)
		}
		values[i] = v
	}
	if len(missing) > 0 {
		return "", memento.Errorf(memento.EINVALID, "please answer every statement; missing: %s", strings.Join(missing, ", "))
	}
	if _, err := h.Store.SaveAnswers(r.Context(), h.Name, p.ID, values); err != nil {
		return "", err
	}
	return "/study", nil
}

// studyChat is the chat page's study hook (uiHandler.page): in a study,
// the page is only the participant's own conversation, during the
// conversation stage; anyone else is sent to their step. It returns false
// when it answered the request.
func (h *uiHandler) studyChat(w http.ResponseWriter, r *http.Request) (*studyChat, bool) {
	p, err := participantOf(r, h.Study)
	if err != nil {
		h.htmlError(w, r, err)
		return nil, false
	}
	if p == nil || p.Stage != experiment.StageConversation {
		http.Redirect(w, r, "/study", http.StatusSeeOther)
		return nil, false
	}
	q := r.URL.Query()
	if q.Get("user") != p.User || q.Get("thread") != p.Thread {
		// The page's script keeps the user and thread in the address; a
		// participant always lands in their own.
		http.Redirect(w, r, chatURL(p), http.StatusSeeOther)
		return nil, false
	}
	return &studyChat{Name: h.Study.Name, Questionnaire: "/study/questionnaire", MinMessages: max(1, h.Study.MinMessages)}, true
}
