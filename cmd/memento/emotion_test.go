package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memento-ai/memento/eval"
	"github.com/memento-ai/memento/llm/llmtest"
)

func TestEmotionAndSpeechSettings(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MEMENTO_EMOTION": "vibes"}, "MEMENTO_EMOTION must be offline or model"},
		{map[string]string{"MEMENTO_EMOTION": "model"}, "MEMENTO_EMOTION=model needs a model server"},
		{map[string]string{"MEMENTO_STT_BASE_URL": "whisper"}, "MEMENTO_STT_BASE_URL"},
		{map[string]string{"MEMENTO_STT_BASE_URL": "http://localhost:9000/v1", "MEMENTO_STT_MODEL": " "}, "MEMENTO_STT_MODEL"},
	} {
		m := NewMain()
		m.Getenv = func(k string) string { return tt.env[k] }
		err := m.ParseFlags(context.Background(), []string{"version"})
		if err == nil || !strings.Contains(message(err), tt.want) {
			t.Errorf("env %v: %v, want an error naming %s", tt.env, err, tt.want)
		}
	}
	m := NewMain()
	m.Getenv = func(k string) string {
		return map[string]string{"MEMENTO_STT_BASE_URL": "http://localhost:9000/v1", "MEMENTO_STT_KEEP_AUDIO": "/tmp/a"}[k]
	}
	if err := m.ParseFlags(context.Background(), []string{"version"}); err != nil {
		t.Fatal(err)
	}
	if s := m.Config.Speech; s.Model != "whisper-1" || s.KeepAudio != "/tmp/a" || m.Config.Emotion != "offline" {
		t.Errorf("speech settings = %+v, emotion %q; want the default model whisper-1 and the offline rules", s, m.Config.Emotion)
	}
}

func TestEvalEmotionCommand(t *testing.T) {
	out, err := run(t, "", "eval", "emotion", "--data", "../../eval/emotion.jsonl", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res eval.EmotionResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if res.Examples < 200 || len(res.Models) != 1 || res.Models[0].Name != "offline" || len(res.Baselines) != 2 {
		t.Fatalf("result = %+v", res)
	}
	off, maj := res.Models[0].Test, res.Baselines[0].Test
	if off.MacroF1 <= maj.MacroF1+0.3 || off.Accuracy <= maj.Accuracy {
		t.Errorf("held-out: offline accuracy %.3f macro-F1 %.3f; majority %.3f %.3f: the rules must beat the baseline clearly",
			off.Accuracy, off.MacroF1, maj.Accuracy, maj.MacroF1)
	}
	text, err := run(t, "", "eval", "emotion", "--data", "../../eval/emotion.jsonl")
	if err != nil || !strings.Contains(text, "test macro-F1") || !strings.Contains(text, "majority (neutral)") {
		t.Errorf("table output = %q, %v", text, err)
	}
	if _, err := run(t, "", "eval", "emotion", "--data", "missing.jsonl"); err == nil || !strings.Contains(message(err), "--data") {
		t.Errorf("missing data file: %v", err)
	}
}

func TestEvalEmotionWithModelServer(t *testing.T) {
	srv := llmtest.New(t)
	srv.Default("classify_emotion", llmtest.ChatJSON(map[string]any{"label": "neutral", "confidence": 0.6}))
	var out, errOut bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &out, &errOut
	env := map[string]string{"MEMENTO_LLM_BASE_URL": srv.URL, "MEMENTO_LLM_MODEL": "m", "MEMENTO_EMBED_PROVIDER": "offline"}
	m.Getenv = func(k string) string { return env[k] }
	ctx := context.Background()
	data := writeFile(t, "emo.jsonl", `{"id":"1","text":"I'm furious!","label":"anger","split":"dev"}
{"id":"2","text":"Comedies please.","label":"neutral","split":"test"}
`)
	err := m.ParseFlags(ctx, []string{"eval", "emotion", "--data", data, "--model", "--json", "--db", writeFile(t, "x.db", ""), "--log-level", "error"})
	if err == nil {
		err = m.Run(ctx)
	}
	m.Close(ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var res eval.EmotionResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Models) != 2 || res.Models[1].Name != "model" || res.Models[1].Test.Accuracy != 1 || res.Models[1].Dev.Accuracy != 0 {
		t.Errorf("models = %+v", res.Models)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("model server got %d requests, want one per message", n)
	}
}
