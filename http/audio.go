package http

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/stt"
)

// AudioPath is the route of speech turns.
const AudioPath = "/v1/chat/audio"

// MaxAudioBytes bounds a speech turn's body: OpenAI's transcription limit,
// minutes of compressed speech.
const MaxAudioBytes = 25 << 20

// Transcriber turns speech into text (stt.Client is one).
type Transcriber interface {
	// Transcribe returns what was said. Errors: EINVALID when no speech
	// was heard, EUNAVAILABLE and EUPSTREAM when the server fails.
	Transcribe(ctx context.Context, a stt.Audio) (string, error)
}

// Speech is what POST /v1/chat/audio needs.
type Speech struct {
	Agent *agent.Agent
	// Transcriber is nil when no transcription server is configured: the
	// route then answers 503 naming the setting.
	Transcriber Transcriber
	// KeepDir, when set, is where each turn's audio is kept, named by the
	// user's message id; empty keeps nothing (the audio lives only in
	// memory for the request).
	KeepDir string
}

// AudioResponse is the answer to a speech turn: the agent's answer to the
// transcript, as POST /v1/chat returns it, and the transcript.
type AudioResponse struct {
	*agent.Response
	Transcript string `json:"transcript"`
}

// isAudioUpload reports the speech-turn route, which the guard lets
// through with a multipart body and a larger limit.
func isAudioUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == AudioPath
}

// checkAudioMediaType takes multipart/form-data only.
func checkAudioMediaType(r *http.Request) error {
	typ, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || typ != "multipart/form-data" {
		return memento.Errorf(memento.EUNSUPPORTED, "%s takes multipart/form-data with the fields audio, user and thread, got Content-Type %s", AudioPath, quoteShort(r.Header.Get("Content-Type")))
	}
	return nil
}

// RegisterSpeech adds POST /v1/chat/audio: a multipart form with the
// recording in "audio" and the "user" and "thread" of the turn. The audio
// is transcribed and the transcript runs the same turn as POST /v1/chat.
func RegisterSpeech(sp Speech) func(api huma.API, s *Server) {
	return func(api huma.API, s *Server) {
		s.mux.HandleFunc("POST "+AudioPath, func(w http.ResponseWriter, r *http.Request) {
			if err := sp.turn(w, r, s); err != nil {
				writeError(w, r, s.Logger, err)
			}
		})
		describeSpeech(api)
	}
}

// describeSpeech adds the route to the OpenAPI document: it is a plain
// handler (huma reads no multipart body within the guard's limits), so
// huma does not describe it by itself.
func describeSpeech(api huma.API) {
	reg := api.OpenAPI().Components.Schemas
	form := &huma.Schema{Type: huma.TypeObject, Required: []string{"audio", "user", "thread"}, Properties: map[string]*huma.Schema{
		"audio":  {Type: huma.TypeString, Format: "binary", Description: "The recording (WebM, Ogg, WAV, MP3, M4A: what the transcription server reads)."},
		"user":   {Type: huma.TypeString, Description: "User the turn is for."},
		"thread": {Type: huma.TypeString, Description: "Thread of the turn."},
	}}
	errResp := func(what string) *huma.Response {
		return &huma.Response{Description: what, Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[ErrorBody](), true, "")}}}
	}
	api.OpenAPI().AddOperation(&huma.Operation{
		OperationID: "chatAudio", Method: http.MethodPost, Path: AudioPath, Tags: []string{"agent"},
		Summary: "Send a spoken message to the recommendation agent",
		Description: "Transcribes the recording through the configured OpenAI-compatible transcription server (MEMENTO_STT_BASE_URL, MEMENTO_STT_MODEL) and runs the same turn as POST /v1/chat with the transcript, " +
			"answering with that turn's answer and the transcript. The recording is not kept unless MEMENTO_STT_KEEP_AUDIO names a directory. At most 25 MiB.",
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"multipart/form-data": {Schema: form}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "The agent's answer and the transcript.", Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[AudioResponse](), true, "")}}},
			"400": errResp("A field is missing, or no speech was recognised."),
			"413": errResp("The recording is over 25 MiB."),
			"415": errResp("The body is not multipart/form-data."),
			"502": errResp("The transcription or language-model server answered unusably."),
			"503": errResp("No transcription server is configured (the message names MEMENTO_STT_BASE_URL), or it cannot be reached."),
		},
	})
}

func (sp Speech) turn(w http.ResponseWriter, r *http.Request, s *Server) error {
	if sp.Transcriber == nil {
		return memento.Errorf(memento.EUNAVAILABLE, "speech turns need a transcription server: set MEMENTO_STT_BASE_URL (and MEMENTO_STT_MODEL) to an OpenAI-compatible endpoint")
	}
	// The guard has read the body into memory within MaxAudioBytes.
	if err := r.ParseMultipartForm(MaxAudioBytes); err != nil {
		return memento.WrapError(memento.EINVALID, err, "the speech turn's form could not be read: %v", err)
	}
	defer r.MultipartForm.RemoveAll()
	user, thread := strings.TrimSpace(r.FormValue("user")), strings.TrimSpace(r.FormValue("thread"))
	if user == "" {
		return memento.Errorf(memento.EINVALID, "user is required")
	}
	if thread == "" {
		return memento.Errorf(memento.EINVALID, "thread is required")
	}
	tenant, ok := memento.TenantFrom(r.Context())
	if !ok {
		tenant = memento.DefaultTenant
		if t := r.Header.Get("X-Memento-Tenant"); t != "" {
			tenant = t
		}
	}
	if p, ok := memento.PrincipalFrom(r.Context()); ok {
		if !p.CanWrite() {
			return memento.Errorf(memento.EFORBIDDEN, "this key may only read; a speech turn writes")
		}
		if err := p.Reaches(memento.Scope{Tenant: tenant, User: user}); err != nil {
			return err
		}
	}
	f, hdr, err := r.FormFile("audio")
	if err != nil {
		return memento.Errorf(memento.EINVALID, "the form must hold the recording in the field \"audio\"")
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return memento.WrapError(memento.EINVALID, err, "the recording could not be read")
	}
	if len(data) == 0 {
		return memento.Errorf(memento.EINVALID, "the recording is empty")
	}
	audio := stt.Audio{Name: hdr.Filename, ContentType: hdr.Header.Get("Content-Type"), Data: data}
	text, err := sp.Transcriber.Transcribe(r.Context(), audio)
	if err != nil {
		return fmt.Errorf("transcribe the recording: %w", err)
	}
	resp, err := sp.Agent.Turn(r.Context(), tenant, agent.Request{User: user, Thread: thread, Message: text})
	if err != nil {
		return err
	}
	if sp.KeepDir != "" {
		if err := keepAudio(sp.KeepDir, tenant, user, thread, audio); err != nil {
			// The turn is stored; losing its recording is logged, not
			// failed.
			s.Logger.WarnContext(r.Context(), "the recording could not be kept", "err", err)
		}
	}
	writeJSON(w, http.StatusOK, AudioResponse{Response: resp, Transcript: text})
	return nil
}

// keepAudio writes a turn's recording under dir, in a file named by the
// hash of its scope and thread and the time, so that no id reaches the
// file system unescaped.
func keepAudio(dir, tenant, user, thread string, a stt.Audio) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(tenant + "\x00" + user + "\x00" + thread))
	ext := strings.ToLower(filepath.Ext(a.Name))
	if len(ext) > 6 || strings.ContainsAny(ext, `/\`) {
		ext = ""
	}
	name := fmt.Sprintf("%s-%d%s", hex.EncodeToString(sum[:8]), time.Now().UnixNano(), ext)
	return os.WriteFile(filepath.Join(dir, name), a.Data, 0o600)
}
