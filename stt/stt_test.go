package stt_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/stt"
)

func TestNewRefusesBadSettings(t *testing.T) {
	for _, tt := range []struct {
		cfg  stt.Config
		want string
	}{
		{stt.Config{BaseURL: "", Model: "m"}, "MEMENTO_STT_BASE_URL"},
		{stt.Config{BaseURL: "ftp://x", Model: "m"}, "MEMENTO_STT_BASE_URL"},
		{stt.Config{BaseURL: "http://x/v1", Model: " "}, "MEMENTO_STT_MODEL"},
	} {
		_, err := stt.New(tt.cfg)
		if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want EINVALID naming %s", tt.cfg, err, tt.want)
		}
	}
}

func TestTranscribe(t *testing.T) {
	var got struct {
		path, auth, model, format, lang, filename, ctype, data string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		f, h, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		b, _ := io.ReadAll(f)
		got.path, got.auth = r.URL.Path, r.Header.Get("Authorization")
		got.model, got.format, got.lang = r.FormValue("model"), r.FormValue("response_format"), r.FormValue("language")
		got.filename, got.ctype, got.data = h.Filename, h.Header.Get("Content-Type"), string(b)
		w.Write([]byte(`{"text": "  Hello there.  "}`))
	}))
	defer srv.Close()
	c, err := stt.New(stt.Config{BaseURL: srv.URL + "/v1/", Model: "whisper-1", APIKey: "k", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	text, err := c.Transcribe(t.Context(), stt.Audio{Name: "a.webm", ContentType: "audio/webm", Data: []byte("OPUS")})
	if err != nil || text != "Hello there." {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	want := struct{ path, auth, model, format, lang, filename, ctype, data string }{
		"/v1/audio/transcriptions", "Bearer k", "whisper-1", "json", "en", "a.webm", "audio/webm", "OPUS"}
	if got != want {
		t.Errorf("request = %+v, want %+v", got, want)
	}
}

func TestTranscribeErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"overloaded", 503, `busy`, memento.EUNAVAILABLE},
		{"rate limited", 429, `slow down`, memento.EUNAVAILABLE},
		{"refused", 400, `{"error":{"message":"unsupported format"}}`, memento.EUPSTREAM},
		{"not a transcription", 200, `{"segments": []}`, memento.EUPSTREAM},
		{"not JSON", 200, `Hello`, memento.EUPSTREAM},
		{"silence", 200, `{"text": " "}`, memento.EINVALID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, _ := stt.New(stt.Config{BaseURL: srv.URL, Model: "m"})
			_, err := c.Transcribe(t.Context(), stt.Audio{Data: []byte("x")})
			if memento.ErrorCode(err) != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}
	c, _ := stt.New(stt.Config{BaseURL: "http://127.0.0.1:1", Model: "m"})
	if _, err := c.Transcribe(t.Context(), stt.Audio{Data: []byte("x")}); memento.ErrorCode(err) != memento.EUNAVAILABLE || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("unreachable server: %v", err)
	}
	if _, err := c.Transcribe(t.Context(), stt.Audio{}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("empty audio: %v", err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer slow.Close()
	c, _ = stt.New(stt.Config{BaseURL: slow.URL, Model: "m", Timeout: 50 * time.Millisecond})
	if _, err := c.Transcribe(context.Background(), stt.Audio{Data: []byte("x")}); memento.ErrorCode(err) != memento.EUNAVAILABLE || !strings.Contains(err.Error(), "did not answer within") {
		t.Errorf("slow server: %v", err)
	}
}
