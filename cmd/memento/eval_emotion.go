package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/eval"
	"github.com/memento-ai/memento/llm/offline"
)

func (m *Main) evalEmotionCommand() *cobra.Command {
	var data string
	var asJSON, withModel, misses bool
	cmd := &cobra.Command{
		Use:   "emotion",
		Short: "Score the emotion tags of user messages on a labelled set",
		Long: `Tag every message of --data (JSON lines {"id","text","label","split"}, labels
joy, sadness, anger, fear, surprise, disgust or neutral, split dev or test) with
the offline rules, and with --model also with the configured model server
(MEMENTO_LLM=openai), and report accuracy, macro-F1 (the unweighted mean of the
per-label F1) and per-label precision, recall and F1 on each split. The rules
were developed on the dev split; the test split is held out, and its figures
are the ones to quote.

Two baselines are scored in the same run: majority (the most frequent label of
the dev split, always) and uniform (the labels in turn). --json prints
{"examples","dev","test","models":[{"name","dev":{...},"test":{...}}],"baselines":[...]}.
The shipped set is eval/emotion.jsonl.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			f, err := os.Open(data)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "--data: %v", err)
			}
			examples, err := eval.ReadEmotions(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("--data %s: %w", data, err)
			}
			models := []eval.NamedEmotionClassifier{{Name: "offline", Classifier: offline.New(offline.Options{})}}
			if withModel {
				app, err := m.App(ctx)
				if err != nil {
					return err
				}
				c, err := app.ServerEmotionClassifier(ctx)
				if err != nil {
					return err
				}
				models = append(models, eval.NamedEmotionClassifier{Name: "model", Classifier: c})
			}
			res, err := eval.Emotion(ctx, examples, models)
			if err != nil {
				return err
			}
			if !misses {
				res.Misses = nil
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			printEmotionResult(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "eval/emotion.jsonl", "labelled messages, JSON lines")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&withModel, "model", false, "also score the configured model server (MEMENTO_LLM=openai)")
	cmd.Flags().BoolVar(&misses, "misses", false, "list the held-out messages the offline rules got wrong")
	return cmd
}

// printEmotionResult writes the figures as a table, held-out split first.
func printEmotionResult(w io.Writer, res *eval.EmotionResult) {
	fmt.Fprintf(w, "%d labelled messages: %d dev, %d test (held out)\n\n", res.Examples, res.Dev, res.Test)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "classifier\ttest accuracy\ttest macro-F1\tdev accuracy\tdev macro-F1")
	for _, c := range append(append([]eval.EmotionClassifierScores{}, res.Models...), res.Baselines...) {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\n", c.Name, c.Test.Accuracy, c.Test.MacroF1, c.Dev.Accuracy, c.Dev.MacroF1)
	}
	tw.Flush()
	for _, c := range res.Models {
		fmt.Fprintf(w, "\n%s on the test split, per label:\n", c.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "label\tprecision\trecall\tF1\tsupport")
		for _, l := range c.Test.SortedLabels() {
			s := c.Test.Labels[l]
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%d\n", l, s.Precision, s.Recall, s.F1, s.Support)
		}
		tw.Flush()
	}
	for _, m := range res.Misses {
		fmt.Fprintf(w, "miss %s: %q is %s, tagged %s\n", m.ID, m.Text, m.Gold, m.Got)
	}
}
