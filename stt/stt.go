// Package stt transcribes speech through an OpenAI-compatible
// transcription endpoint: POST {base}/audio/transcriptions with a
// multipart form holding the audio file and the model's name, answered
// with {"text": "..."}. OpenAI, whisper.cpp's server, faster-whisper
// servers and vLLM speak it.
//
// The audio passes through in memory and is never written anywhere by
// this package; keeping it is the caller's choice.
package stt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// DefaultTimeout bounds one transcription request.
const DefaultTimeout = 60 * time.Second

// Config says which server to ask.
type Config struct {
	// BaseURL is the server's API root, such as
	// http://localhost:8000/v1; the request goes to
	// BaseURL/audio/transcriptions.
	BaseURL string
	// Model names the transcription model, such as whisper-1.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Language, when set, is the ISO-639-1 code of the speech, which
	// helps the model.
	Language string
	// Timeout bounds a request; zero takes DefaultTimeout.
	Timeout time.Duration
	// HTTPClient, when set, sends the requests (tests use httptest's).
	HTTPClient *http.Client
}

// Client is a transcription client. It is safe for concurrent use.
type Client struct {
	endpoint string
	cfg      Config
	http     *http.Client
}

// New checks cfg and returns a client. Errors: EINVALID naming the bad
// setting.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, memento.Errorf(memento.EINVALID, "the transcription server's base URL (MEMENTO_STT_BASE_URL) must be an http(s) URL, got %q", cfg.BaseURL)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, memento.Errorf(memento.EINVALID, "the transcription model (MEMENTO_STT_MODEL) must not be empty")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{endpoint: u.String() + "/audio/transcriptions", cfg: cfg, http: hc}, nil
}

// Audio is one recording to transcribe.
type Audio struct {
	// Name is the file name the server sees; servers read the format
	// from its extension (.wav, .webm, .ogg, .mp3, .m4a).
	Name string
	// ContentType is the recording's media type, such as audio/webm.
	ContentType string
	Data        []byte
}

// Transcribe returns what was said in the audio, trimmed. Errors:
// EINVALID for empty audio or a recording in which the server heard no
// words; EUNAVAILABLE when the server cannot be reached, times out or
// answers 429 or 5xx; EUPSTREAM when it refuses the request (another 4xx)
// or answers with something other than a transcription.
func (c *Client) Transcribe(ctx context.Context, a Audio) (string, error) {
	if len(a.Data) == 0 {
		return "", memento.Errorf(memento.EINVALID, "the audio is empty")
	}
	body, ctype, err := c.form(a)
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", memento.WrapError(memento.EUNAVAILABLE, err, "the transcription server did not answer within %s", c.cfg.Timeout)
		}
		return "", memento.WrapError(memento.EUNAVAILABLE, err, "the transcription server at %s cannot be reached", c.cfg.BaseURL)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", memento.WrapError(memento.EUNAVAILABLE, err, "the transcription server's answer could not be read")
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return "", memento.Errorf(memento.EUNAVAILABLE, "the transcription server answered %d: %s", resp.StatusCode, snippet(raw))
	case resp.StatusCode >= 300:
		return "", memento.Errorf(memento.EUPSTREAM, "the transcription server refused the audio with %d: %s", resp.StatusCode, snippet(raw))
	}
	var out struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Text == nil {
		return "", memento.Errorf(memento.EUPSTREAM, "the transcription server's answer is not a transcription ({\"text\": ...}): %s", snippet(raw))
	}
	text := strings.TrimSpace(*out.Text)
	if text == "" {
		return "", memento.Errorf(memento.EINVALID, "no speech was recognised in the audio")
	}
	return text, nil
}

// form builds the multipart body: the file, the model, and the language
// and response format.
func (c *Client) form(a Audio) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	name := a.Name
	if name == "" {
		name = "audio.wav"
	}
	ct := a.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, strings.NewReplacer(`"`, "", "\\", "", "\r", "", "\n", "").Replace(name)))
	h.Set("Content-Type", ct)
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(a.Data); err != nil {
		return nil, "", err
	}
	fields := [][2]string{{"model", c.cfg.Model}, {"response_format", "json"}}
	if c.cfg.Language != "" {
		fields = append(fields, [2]string{"language", c.cfg.Language})
	}
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// snippet is the start of a server's answer, for an error message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
