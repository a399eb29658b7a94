package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// recordedUpload is what the fake transcription server was sent.
type recordedUpload struct {
	model, filename, contentType string
	size                         int
	webm                         bool
}

// browserTranscriber is an OpenAI-compatible transcription server for the
// browser test: whatever the page recorded, it "hears" said, and it keeps
// what each request held so the test can check that a real recording
// arrived.
type browserTranscriber struct {
	said    string
	mu      sync.Mutex
	uploads []recordedUpload
}

func (f *browserTranscriber) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/audio/transcriptions" || r.ParseMultipartForm(32<<20) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	file, hdr, err := r.FormFile("file")
	if err != nil {
		http.Error(w, `{"error":{"message":"file is required"}}`, http.StatusBadRequest)
		return
	}
	data, _ := io.ReadAll(file)
	f.mu.Lock()
	f.uploads = append(f.uploads, recordedUpload{
		model: r.FormValue("model"), filename: hdr.Filename, contentType: hdr.Header.Get("Content-Type"), size: len(data),
		// WebM (Matroska) files open with the EBML magic number.
		webm: bytes.HasPrefix(data, []byte{0x1a, 0x45, 0xdf, 0xa3}),
	})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"text": f.said})
}

// speechFile makes a WAV file of text with espeak-ng (resampled to 48 kHz
// with sox when it is there, the rate Chromium's fake microphone plays
// best), or skips the test.
func speechFile(t *testing.T, text string) string {
	t.Helper()
	espeak, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Skip("browser speech test skipped: espeak-ng is not installed (apt-get install espeak-ng sox)")
	}
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.wav")
	if b, err := exec.Command(espeak, "-w", raw, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, b)
	}
	sox, err := exec.LookPath("sox")
	if err != nil {
		return raw
	}
	out := filepath.Join(dir, "speech.wav")
	if b, err := exec.Command(sox, raw, "-r", "48000", "-c", "1", "-b", "16", out).CombinedOutput(); err != nil {
		t.Fatalf("sox: %v: %s", err, b)
	}
	return out
}

// serveWithEnv starts `memento serve` as serveForBrowser does, with the
// given MEMENTO_* settings.
func serveWithEnv(t *testing.T, env map[string]string) string {
	t.Helper()
	var stderr bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &bytes.Buffer{}, &stderr
	m.Getenv = func(k string) string { return env[k] }
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "memento.db")
	if err := m.ParseFlags(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		t.Fatalf("serve: %v", err)
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

// TestBrowserSpeechTurn records a message through the microphone button in
// Chromium, whose fake microphone plays a recording made with espeak-ng,
// and checks that the page sent it to POST /v1/chat/audio, the fake
// transcription server got a real WebM recording, and the transcript came
// back as the user's message with its emotion and the agent's answer.
func TestBrowserSpeechTurn(t *testing.T) {
	exe := chromium(t)
	said := "Show me two comedy movies please, I'm so excited!"
	wav := speechFile(t, said)
	fake := &browserTranscriber{said: said}
	sttSrv := httptest.NewServer(fake)
	defer sttSrv.Close()
	base := serveWithEnv(t, map[string]string{"MEMENTO_STT_BASE_URL": sttSrv.URL + "/v1", "MEMENTO_STT_MODEL": "whisper-fake"})

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", wav),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second*slowdown)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	console := watchConsole(bctx)

	do(t, bctx, "open the page", chromedp.Navigate(base+"/?user=speaker&thread=t-speech"))
	waitFor(t, bctx, "the page to start", `document.body.dataset.ready === 'true'`, 20*time.Second)
	if !jsEval[bool](t, bctx, `!!document.querySelector('#mic')`) {
		t.Fatal("no microphone button although a transcription server is configured")
	}
	clickNow(t, bctx, "the microphone button", "#mic", 5*time.Second)
	waitFor(t, bctx, "recording to start", `document.querySelector('#mic').getAttribute('aria-pressed') === 'true'`, 10*time.Second)
	do(t, bctx, "speak", chromedp.Sleep(2*time.Second))
	clickNow(t, bctx, "the microphone button again", "#mic", 5*time.Second)
	waitFor(t, bctx, "the answer to the recording",
		`document.querySelectorAll('.turn-agent').length === 1 && !document.querySelector('.turn.pending')`, 20*time.Second)
	if failed := jsEval[string](t, bctx, `document.querySelector('.turn.failed')?.innerText || ''`); failed != "" {
		t.Fatalf("the speech turn failed: %s", failed)
	}
	if got := jsEval[string](t, bctx, `document.querySelector('.turn-user [data-slot="text"]').textContent`); got != said {
		t.Errorf("the user's turn shows %q, want the transcript %q", got, said)
	}
	if got := jsEval[string](t, bctx, `document.querySelector('.turn-user [data-slot="emotion"]').dataset.emotion || ''`); got != "joy" {
		t.Errorf("the user's turn is tagged %q, want joy", got)
	}
	if n := jsEval[int](t, bctx, `document.querySelectorAll('.turn-agent .card').length`); n != 2 {
		t.Errorf("the answer shows %d titles, want the 2 the transcript asks for", n)
	}
	fake.mu.Lock()
	uploads := append([]recordedUpload(nil), fake.uploads...)
	fake.mu.Unlock()
	if len(uploads) != 1 {
		t.Fatalf("the transcription server got %d requests, want 1", len(uploads))
	}
	u := uploads[0]
	t.Logf("the page uploaded %s (%s, %d bytes, WebM %v) for %s", u.filename, u.contentType, u.size, u.webm, u.model)
	if u.model != "whisper-fake" || !u.webm || u.size < 1000 || !strings.HasPrefix(u.contentType, "audio/webm") {
		t.Errorf("the transcription server got %+v; want a WebM recording of at least 1000 bytes for whisper-fake", u)
	}

	// The inspector's Emotions tab lists the message with its emotion, as
	// a reload of the conversation shows it on the turn.
	clickNow(t, bctx, "the inspector", "#open-inspector", 5*time.Second)
	clickNow(t, bctx, "the Emotions tab", "#tab-emotions", 5*time.Second)
	waitFor(t, bctx, "the emotions panel", `!!document.querySelector('[data-panel="emotions"] .emotion-item')`, 10*time.Second)
	if got := jsEval[string](t, bctx, `document.querySelector('[data-panel="emotions"] .emotion-item .mem-key').textContent`); got != "joy" {
		t.Errorf("the Emotions tab shows %q, want joy", got)
	}
	do(t, bctx, "reload", chromedp.Reload())
	waitFor(t, bctx, "the page to start again", `document.body.dataset.ready === 'true'`, 20*time.Second)
	if got := jsEval[string](t, bctx, `document.querySelector('.turn-user [data-slot="emotion"]')?.dataset.emotion || ''`); got != "joy" {
		t.Errorf("after a reload the user's turn is tagged %q, want joy", got)
	}
	console.check(t)
}
