package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/openai"
)

// llmCheck is what `memento llm check` reports.
type llmCheck struct {
	Provider         string  `json:"provider"`
	Model            string  `json:"model"`
	BaseURL          string  `json:"baseUrl,omitempty"`
	LatencyMs        float64 `json:"latencyMs"`
	JSONSchema       bool    `json:"jsonSchema"`
	StructuredOutput string  `json:"structuredOutput"`
	Embedder         string  `json:"embedder"`
	EmbedDim         int     `json:"embedDim"`
	EmbedLatencyMs   float64 `json:"embedLatencyMs"`
}

func (m *Main) llmCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "llm", Short: "Inspect the configured language model"}
	var asJSON bool
	check := &cobra.Command{
		Use:   "check",
		Short: "Verify the configured language model and embedder end to end",
		Long:  "Send one small request to the configured language model and one to the embedder, and report the model, latency and structured-output support.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			model, err := app.Model(ctx)
			if err != nil {
				return err
			}
			out := llmCheck{Provider: m.Config.LLM.Provider, Model: model.Name()}
			if om, ok := model.(*openai.Model); ok {
				r, err := om.Check(ctx)
				if err != nil {
					return err
				}
				out.Model, out.BaseURL, out.JSONSchema, out.StructuredOutput = r.Model, r.BaseURL, r.JSONSchema, r.StructuredOutput
				out.LatencyMs = float64(r.Latency.Microseconds()) / 1000
			} else {
				start := time.Now()
				u, err := model.UnderstandRequest(ctx, memento.UnderstandInput{Message: "three comedy movies from the 90s", Context: memento.NewActiveContext()})
				if err != nil {
					return err
				}
				if !u.Recognised || len(u.Genres) == 0 {
					return memento.Errorf(memento.EINTERNAL, "the offline model did not understand a plain request: %+v", u)
				}
				out.LatencyMs = float64(time.Since(start).Microseconds()) / 1000
				out.StructuredOutput = "typed (no JSON round trip)"
			}
			emb, err := app.Embedder(ctx)
			if err != nil {
				return err
			}
			start := time.Now()
			vecs, err := emb.Embed(ctx, []string{"science fiction"})
			if err != nil {
				return err
			}
			out.EmbedLatencyMs = float64(time.Since(start).Microseconds()) / 1000
			out.Embedder, out.EmbedDim = emb.ID(), len(vecs[0])
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(out)
			}
			fmt.Fprintf(m.Stdout, "language model: %s (%s) ok in %.1f ms, structured output: %s\n", out.Provider, out.Model, out.LatencyMs, out.StructuredOutput)
			fmt.Fprintf(m.Stdout, "embedder: %s, %d dimensions, ok in %.1f ms\n", out.Embedder, out.EmbedDim, out.EmbedLatencyMs)
			return nil
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(check)
	return cmd
}
