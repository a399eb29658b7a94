package main

import (
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/stt"
)

// speech returns what POST /v1/chat/audio needs: the agent and, when
// MEMENTO_STT_BASE_URL is set, the transcription client. Without one the
// route answers 503 naming the setting.
func (m *Main) speech(a *engine.Engine, ag *agent.Agent) (mhttp.Speech, error) {
	sp := mhttp.Speech{Agent: ag, KeepDir: m.Config.Speech.KeepAudio}
	if m.Config.Speech.BaseURL == "" {
		return sp, nil
	}
	c, err := stt.New(stt.Config{BaseURL: m.Config.Speech.BaseURL, Model: m.Config.Speech.Model, APIKey: m.Config.Speech.APIKey})
	if err != nil {
		return sp, err
	}
	sp.Transcriber = c
	a.Logger.Info("speech turns", "transcription", m.Config.Speech.BaseURL, "model", m.Config.Speech.Model, "keepAudio", m.Config.Speech.KeepAudio != "")
	return sp, nil
}
