package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/llm/llmcheck"
)

// llmCheck is what `memento llm check` reports. OK is false, and the
// command fails, when the server cannot be used or any task's answer is
// unusable; Tasks says which.
type llmCheck struct {
	OK               bool    `json:"ok"`
	Provider         string  `json:"provider"`
	Model            string  `json:"model"`
	BaseURL          string  `json:"baseUrl,omitempty"`
	LatencyMs        float64 `json:"latencyMs"`
	JSONSchema       bool    `json:"jsonSchema"`
	StructuredOutput string  `json:"structuredOutput"`
	Embedder         string  `json:"embedder"`
	EmbedDim         int     `json:"embedDim"`
	EmbedLatencyMs   float64 `json:"embedLatencyMs"`
	// Error says why the server could not be checked at all.
	Error string            `json:"error,omitempty"`
	Tasks []llmcheck.Result `json:"tasks"`
}

func (m *Main) llmCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "llm", Short: "Inspect the configured language model"}
	var asJSON bool
	check := &cobra.Command{
		Use:   "check",
		Short: "Verify the configured language model and embedder end to end",
		Long: "Send one small request to the configured language model, then ask it to do each task once " +
			"(understand, sentinel, extract, review_extraction, attribute, merge, review_merge, summarise, " +
			"preferences, describe_cluster, reply) and the embedder to embed one text. Report the model, latencies, " +
			"structured-output support and each task's result; fail when any task's answer is unusable. " +
			"The model is checked without its offline stand-in, which would hide the failure.",
		Args: cobra.NoArgs,
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
			out := llmCheck{Provider: m.Config.LLM.Provider, Model: model.Name(), Tasks: []llmcheck.Result{}}
			emb, err := app.Embedder(ctx)
			if err != nil {
				return err
			}
			out.Embedder = emb.ID()
			checked := model
			if om := engine.OpenAIModel(model); om != nil {
				checked = om
				r, err := om.Check(ctx)
				if err != nil {
					// Nothing more can be learned from a server that
					// fails the smallest request; each task would only
					// wait out its retries to fail the same way.
					out.Error = err.Error()
					return m.llmReport(out, asJSON, err)
				}
				out.Model, out.BaseURL, out.JSONSchema, out.StructuredOutput = r.Model, r.BaseURL, r.JSONSchema, r.StructuredOutput
				out.LatencyMs = float64(r.Latency.Microseconds()) / 1000
			} else {
				out.StructuredOutput = "typed (no JSON round trip)"
			}
			out.Tasks = llmcheck.Run(ctx, checked, emb)
			out.OK = llmcheck.OK(out.Tasks)
			for _, t := range out.Tasks {
				switch t.Task {
				case memento.ModelTaskUnderstand:
					if out.LatencyMs == 0 {
						out.LatencyMs = t.LatencyMs
					}
				case memento.ModelTaskEmbed:
					out.EmbedLatencyMs = t.LatencyMs
				}
			}
			if emb.Dim() > 0 {
				out.EmbedDim = emb.Dim()
			}
			return m.llmReport(out, asJSON, nil)
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(check)
	return cmd
}

// llmReport prints the check and fails when it is not OK; cause is why the
// server could not be checked at all, if that is so.
func (m *Main) llmReport(out llmCheck, asJSON bool, cause error) error {
	if asJSON {
		if err := json.NewEncoder(m.Stdout).Encode(out); err != nil {
			return err
		}
	} else {
		status := "ok"
		if out.Error != "" {
			status = "FAILED: " + out.Error
		}
		fmt.Fprintf(m.Stdout, "language model: %s (%s) %s in %.1f ms, structured output: %s\n", out.Provider, out.Model, status, out.LatencyMs, out.StructuredOutput)
		fmt.Fprintf(m.Stdout, "embedder: %s, %d dimensions, in %.1f ms\n", out.Embedder, out.EmbedDim, out.EmbedLatencyMs)
		for _, t := range out.Tasks {
			line := fmt.Sprintf("  %-18s ok    %8.1f ms", t.Task, t.LatencyMs)
			if !t.OK {
				line = fmt.Sprintf("  %-18s FAIL  %8.1f ms  %s", t.Task, t.LatencyMs, t.Error)
			}
			fmt.Fprintln(m.Stdout, line)
		}
	}
	if out.OK {
		return nil
	}
	if cause != nil {
		return fmt.Errorf("language model check: %w", cause)
	}
	var failed []string
	for _, t := range out.Tasks {
		if !t.OK {
			failed = append(failed, t.Task)
		}
	}
	return memento.Errorf(memento.EUPSTREAM, "the language model gave unusable answers for: %v", failed)
}
