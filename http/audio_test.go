package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/stt"
)

// speak makes a WAV recording of text with espeak-ng, or skips the test
// when espeak-ng is not installed (CI installs it: .ci/run).
func speak(t *testing.T, text string) []byte {
	t.Helper()
	bin, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Skip("espeak-ng is not installed (apt-get install espeak-ng); speech turns are tested with its recordings")
	}
	out := filepath.Join(t.TempDir(), "speech.wav")
	if b, err := exec.Command(bin, "-w", out, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, b)
	}
	wav, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(wav) < 1000 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		t.Fatalf("espeak-ng wrote %d bytes that are not a WAV file", len(wav))
	}
	return wav
}

// fakeTranscriber is an OpenAI-compatible transcription server that knows
// the recordings it was given: it answers the text of the audio it
// receives, and records what each request held.
type fakeTranscriber struct {
	mu      sync.Mutex
	known   map[string]string // audio bytes -> text
	models  []string
	names   []string
	failure int
}

func (f *fakeTranscriber) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if typ, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); typ != "multipart/form-data" {
		http.Error(w, "want multipart", http.StatusBadRequest)
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	file, hdr, err := r.FormFile("file")
	if err != nil {
		http.Error(w, `{"error":{"message":"file is required"}}`, http.StatusBadRequest)
		return
	}
	audio, _ := io.ReadAll(file)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.models = append(f.models, r.FormValue("model"))
	f.names = append(f.names, hdr.Filename)
	if f.failure != 0 {
		http.Error(w, `{"error":{"message":"overloaded"}}`, f.failure)
		return
	}
	text, ok := f.known[string(audio)]
	if !ok {
		text = ""
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"text": text})
}

// audioForm builds the multipart body of a speech turn.
func audioForm(t *testing.T, fields map[string]string, audio []byte) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if audio != nil {
		part, err := w.CreateFormFile("audio", "speech.wav")
		if err != nil {
			t.Fatal(err)
		}
		part.Write(audio)
	}
	w.Close()
	return &buf, w.FormDataContentType()
}

func postAudio(t *testing.T, url string, fields map[string]string, audio []byte) (int, map[string]any) {
	t.Helper()
	body, ctype := audioForm(t, fields, audio)
	resp, err := http.Post(url+mhttp.AudioPath, ctype, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST %s: %v", mhttp.AudioPath, err)
	}
	return resp.StatusCode, out
}

func speechAgent(t *testing.T) (*agent.Agent, *catalog.Index, memento.MessageLog, memento.ThreadService) {
	t.Helper()
	db := enginetest.Open(t)
	cat := catalog.New([]memento.Title{
		{ID: "a", Title: "Alpha", Type: "movie", Year: 2012, Genres: []string{"Comedy"}},
		{ID: "b", Title: "Beta", Type: "movie", Year: 2014, Genres: []string{"Comedy"}},
		{ID: "c", Title: "Gamma", Type: "movie", Year: 2016, Genres: []string{"Comedy"}},
	})
	model := offline.New(offline.Options{})
	return &agent.Agent{Catalog: cat, Threads: db, Model: model, Emotion: model}, cat, db, db
}

func TestSpeechTurn(t *testing.T) {
	said := "Show me two comedy movies, please."
	wav := speak(t, said)
	fake := &fakeTranscriber{known: map[string]string{string(wav): said}}
	sttSrv := httptest.NewServer(fake)
	defer sttSrv.Close()
	client, err := stt.New(stt.Config{BaseURL: sttSrv.URL + "/v1", Model: "whisper-test"})
	if err != nil {
		t.Fatal(err)
	}
	ag, cat, log, threads := speechAgent(t)
	keep := t.TempDir()
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, threads, log), mhttp.RegisterSpeech(mhttp.Speech{Agent: ag, Transcriber: client}))
	})

	code, body := postAudio(t, ts.URL, map[string]string{"user": "ana", "thread": "t1"}, wav)
	if code != http.StatusOK {
		t.Fatalf("speech turn = %d %v", code, body)
	}
	if body["transcript"] != said {
		t.Errorf("transcript = %v, want %q", body["transcript"], said)
	}
	if n := len(body["titles"].([]any)); n != 2 || body["searched"] != true {
		t.Errorf("speech turn answered %d titles, searched %v; want the 2 comedies the transcript asks for", n, body["searched"])
	}
	if fake.models[0] != "whisper-test" || fake.names[0] != "speech.wav" {
		t.Errorf("transcription request had model %q, file %q", fake.models[0], fake.names[0])
	}
	// The turn is the same as a typed one: the transcript is the user's
	// stored message, with its emotion.
	code, thread := get(t, ts.URL+"/v1/users/ana/threads/t1")
	if code != 200 {
		t.Fatalf("thread = %d %v", code, thread)
	}
	msgs := thread["messages"].([]any)
	first := msgs[0].(map[string]any)
	if first["text"] != said || first["role"] != "user" {
		t.Errorf("stored message = %v, want the transcript", first)
	}
	if e, ok := first["emotion"].(map[string]any); !ok || e["label"] != memento.EmotionNeutral {
		t.Errorf("stored message emotion = %v, want neutral", first["emotion"])
	}
	// Audio is not kept unless configured.
	if entries, _ := os.ReadDir(keep); len(entries) != 0 {
		t.Errorf("audio kept without the setting: %v", entries)
	}

	// Silence, or speech the server cannot make out, is a 400 naming it.
	code, body = postAudio(t, ts.URL, map[string]string{"user": "ana", "thread": "t1"}, []byte("RIFF not a recording"))
	if code != http.StatusBadRequest || !strings.Contains(audioErrMessage(body), "no speech") {
		t.Errorf("unrecognised audio = %d %v, want 400 saying no speech was recognised", code, body)
	}
	// Missing fields.
	code, body = postAudio(t, ts.URL, map[string]string{"thread": "t1"}, wav)
	if code != http.StatusBadRequest || !strings.Contains(audioErrMessage(body), "user") {
		t.Errorf("no user = %d %v", code, body)
	}
	code, body = postAudio(t, ts.URL, map[string]string{"user": "ana", "thread": "t1"}, nil)
	if code != http.StatusBadRequest || !strings.Contains(audioErrMessage(body), "audio") {
		t.Errorf("no audio = %d %v", code, body)
	}
	// A JSON body is not a speech turn.
	resp, err := http.Post(ts.URL+mhttp.AudioPath, "application/json", strings.NewReader(`{"user":"ana"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("JSON body = %d, want 415", resp.StatusCode)
	}
	// A server that fails is a 503, and the turn is not stored.
	fake.mu.Lock()
	fake.failure = http.StatusServiceUnavailable
	fake.mu.Unlock()
	code, body = postAudio(t, ts.URL, map[string]string{"user": "ana", "thread": "t2"}, wav)
	if code != http.StatusServiceUnavailable || !strings.Contains(audioErrMessage(body), "transcription server") {
		t.Errorf("failing transcription server = %d %v, want 503", code, body)
	}
}

func TestSpeechTurnKeepsAudioWhenConfigured(t *testing.T) {
	said := "Something funny."
	wav := speak(t, said)
	sttSrv := httptest.NewServer(&fakeTranscriber{known: map[string]string{string(wav): said}})
	defer sttSrv.Close()
	client, err := stt.New(stt.Config{BaseURL: sttSrv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ag, cat, _, _ := speechAgent(t)
	keep := filepath.Join(t.TempDir(), "audio")
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterSpeech(mhttp.Speech{Agent: ag, Transcriber: client, KeepDir: keep}))
	})
	if code, body := postAudio(t, ts.URL, map[string]string{"user": "ana", "thread": "t1"}, wav); code != 200 {
		t.Fatalf("speech turn = %d %v", code, body)
	}
	entries, err := os.ReadDir(keep)
	if err != nil || len(entries) != 1 {
		t.Fatalf("kept audio = %v, %v; want one file", entries, err)
	}
	got, _ := os.ReadFile(filepath.Join(keep, entries[0].Name()))
	if !bytes.Equal(got, wav) || !strings.HasSuffix(entries[0].Name(), ".wav") {
		t.Errorf("kept %s, %d bytes; want the %d-byte recording", entries[0].Name(), len(got), len(wav))
	}
}

func TestSpeechTurnWithoutServer(t *testing.T) {
	ag, cat, _, _ := speechAgent(t)
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterSpeech(mhttp.Speech{Agent: ag}))
	})
	code, body := postAudio(t, ts.URL, map[string]string{"user": "ana", "thread": "t1"}, []byte("RIFF...."))
	if code != http.StatusServiceUnavailable || !strings.Contains(audioErrMessage(body), "MEMENTO_STT_BASE_URL") {
		t.Errorf("speech turn without a server = %d %v, want 503 naming MEMENTO_STT_BASE_URL", code, body)
	}
}

func TestChatAnswerCarriesEmotion(t *testing.T) {
	ag, cat, log, threads := speechAgent(t)
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, threads, log))
	})
	code, body := post(t, ts.URL+"/v1/chat", `{"user":"ana","thread":"t1","message":"I love comedies, this is so exciting!"}`)
	if code != 200 {
		t.Fatalf("chat = %d %v", code, body)
	}
	e, _ := body["emotion"].(map[string]any)
	if e["label"] != memento.EmotionJoy || e["confidence"].(float64) <= 0.5 {
		t.Errorf("answer emotion = %v, want joy above 0.5", body["emotion"])
	}
}

func audioErrMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func TestFrustrationAfterRepeatedRejections(t *testing.T) {
	db := enginetest.Open(t)
	var titles []memento.Title
	for i := range 12 {
		titles = append(titles, memento.Title{ID: string(rune('a' + i)), Title: "Comedy " + string(rune('A'+i)), Type: "movie", Year: 2000 + i, Genres: []string{"Comedy"}})
	}
	cat := catalog.New(titles)
	model := offline.New(offline.Options{})
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: model, Emotion: model}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, db, db))
	})
	turn := func(msg string) string {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"user": "ana", "thread": "t1", "message": msg})
		code, body := post(t, ts.URL+"/v1/chat", string(b))
		if code != 200 {
			t.Fatalf("chat %q = %d %v", msg, code, body)
		}
		return body["reply"].(string)
	}
	turn("Show me 3 comedy movies.")
	// A first rejection, said calmly, is only a rejection.
	if r := turn("Not those, different ones."); strings.Contains(r, "Sorry") || strings.Contains(r, "widen") {
		t.Errorf("calm first rejection got %q", r)
	}
	// Turning them down again in frustration: the reply owns it briefly
	// and offers to drop a constraint in force.
	r := turn("Ugh, not those either. This is so annoying!")
	if !strings.HasPrefix(r, "Sorry these keep missing the mark.") || !strings.Contains(r, "widen the search") || !strings.Contains(r, "the comedy genre") {
		t.Errorf("frustrated repeated rejection got %q", r)
	}
}

func TestSpeechTurnInOpenAPI(t *testing.T) {
	ag, cat, _, _ := speechAgent(t)
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterSpeech(mhttp.Speech{Agent: ag}))
	})
	code, doc := get(t, ts.URL+"/openapi.json")
	if code != 200 {
		t.Fatalf("openapi = %d", code)
	}
	op, _ := doc["paths"].(map[string]any)[mhttp.AudioPath].(map[string]any)["post"].(map[string]any)
	if op == nil || op["operationId"] != "chatAudio" {
		t.Fatalf("openapi lacks POST %s: %v", mhttp.AudioPath, doc["paths"].(map[string]any)[mhttp.AudioPath])
	}
	b, _ := json.Marshal(op)
	for _, want := range []string{"multipart/form-data", "#/components/schemas/AudioResponse", "MEMENTO_STT_BASE_URL"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the operation does not mention %s: %s", want, b)
		}
	}
	// The answer's schema is the chat answer's, plus the transcript.
	props, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)["AudioResponse"].(map[string]any)["properties"].(map[string]any)
	for _, field := range []string{"transcript", "reply", "titles", "activeContext", "emotion"} {
		if _, ok := props[field]; !ok {
			t.Errorf("AudioResponse schema lacks %s: %v", field, props)
		}
	}
}
