package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memento-ai/memento/llm/llmtest"
)

func TestLLMCheckOffline(t *testing.T) {
	out, err := run(t, "", "llm", "check", "--json", "--db", t.TempDir()+"/m.db")
	if err != nil {
		t.Fatal(err)
	}
	var got llmCheck
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Provider != "offline" || got.EmbedDim != 256 || !strings.HasPrefix(got.Embedder, "offline-hash/") {
		t.Errorf("check = %+v", got)
	}
}

func TestLLMCheckOpenAICompatible(t *testing.T) {
	srv := llmtest.New(t)
	srv.EnqueueTask("check", llmtest.ChatJSON(map[string]any{"ok": true}))
	srv.AutoEmbed(8)
	var out bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &out, &bytes.Buffer{}
	env := map[string]string{"MEMENTO_LLM_BASE_URL": srv.URL, "MEMENTO_LLM_MODEL": "fake-model", "MEMENTO_EMBED_MODEL": "fake-embed"}
	m.Getenv = func(k string) string { return env[k] }
	ctx := context.Background()
	if err := m.ParseFlags(ctx, []string{"llm", "check", "--json", "--db", t.TempDir() + "/m.db", "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	if m.Config.LLM.Provider != "openai" || m.Config.Embed.Provider != "openai" {
		t.Fatalf("a base URL must select the openai providers: %+v", m.Config)
	}
	err := m.Run(ctx)
	m.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got llmCheck
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.Provider != "openai" || !got.JSONSchema || got.EmbedDim != 8 || got.BaseURL != srv.URL {
		t.Errorf("check = %+v", got)
	}
}
