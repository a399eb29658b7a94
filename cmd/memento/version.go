package main

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// versionInfo is what `memento version` reports.
type versionInfo struct {
	Version    string `json:"version"`
	Go         string `json:"go"`
	LLM        string `json:"llm"`
	LLMModel   string `json:"llmModel,omitempty"`
	Embedder   string `json:"embedder"`
	EmbedModel string `json:"embedModel,omitempty"`
}

func (m *Main) versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version and the configured providers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := m.Config
			c.Resolve()
			v := versionInfo{Version: Version, Go: runtime.Version(), LLM: c.LLM.Provider, Embedder: c.Embed.Provider}
			if c.LLM.Provider == "openai" {
				v.LLMModel = c.LLM.Model
			}
			if c.Embed.Provider == "openai" {
				v.EmbedModel = c.Embed.Model
			} else {
				v.EmbedModel = fmt.Sprintf("offline-hash/%d", c.Embed.Dim)
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(v)
			}
			fmt.Fprintf(m.Stdout, "memento %s (%s)\nlanguage model: %s %s\nembedder: %s %s\n", v.Version, v.Go, v.LLM, v.LLMModel, v.Embedder, v.EmbedModel)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
