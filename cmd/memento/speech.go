package main

import (
	"github.com/memento-ai/memento/agent"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/stt"
)

// speech returns what POST /v1/chat/audio needs: the agent and, when
// MEMENTO_STT_BASE_URL is set, the transcription client. Without one the
// route answers 503 naming the setting.
func (a *App) speech(ag *agent.Agent) (mhttp.Speech, error) {
	sp := mhttp.Speech{Agent: ag, KeepDir: a.Config.Speech.KeepAudio}
	if a.Config.Speech.BaseURL == "" {
		return sp, nil
	}
	c, err := stt.New(stt.Config{BaseURL: a.Config.Speech.BaseURL, Model: a.Config.Speech.Model, APIKey: a.Config.Speech.APIKey})
	if err != nil {
		return sp, err
	}
	sp.Transcriber = c
	a.Logger.Info("speech turns", "transcription", a.Config.Speech.BaseURL, "model", a.Config.Speech.Model, "keepAudio", a.Config.Speech.KeepAudio != "")
	return sp, nil
}
