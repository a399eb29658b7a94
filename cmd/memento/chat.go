package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/engine"
)

// agentWithWorkers opens the app and its agent and starts the background
// workers, so that each turn's jobs (summaries, memories) run while the
// conversation goes on.
func (m *Main) agentWithWorkers(ctx context.Context) (*engine.Engine, *agent.Agent, error) {
	app, err := m.App(ctx)
	if err != nil {
		return nil, nil, err
	}
	ag, err := app.Agent(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := app.StartWorkers(ctx); err != nil {
		return nil, nil, err
	}
	return app, ag, nil
}

func (m *Main) chatCommand() *cobra.Command {
	var user, thread string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk to the recommendation agent in the terminal",
		Long:  "Talk to the recommendation agent. Each answer prints the reply, the titles and the active context the agent used. Type /quit or end the input to leave.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			_, ag, err := m.agentWithWorkers(ctx)
			if err != nil {
				return err
			}
			if thread == "" {
				thread = "chat-" + time.Now().UTC().Format("20060102-150405")
			}
			if !asJSON {
				fmt.Fprintf(m.Stdout, "Memento chat, user %s, thread %s. Ask for films, refine (\"movie only\", \"make it older\"), or say \"not those\". /quit leaves.\n", user, thread)
			}
			sc := bufio.NewScanner(m.Stdin)
			sc.Buffer(make([]byte, 64*1024), 1<<20)
			for {
				if !asJSON {
					fmt.Fprint(m.Stdout, "\nyou> ")
				}
				if !sc.Scan() {
					break
				}
				line := strings.TrimSpace(sc.Text())
				if line == "" {
					continue
				}
				if line == "/quit" || line == "/exit" {
					break
				}
				resp, err := ag.Turn(ctx, m.Config.Tenant, agent.Request{User: user, Thread: thread, Message: line})
				if err != nil {
					fmt.Fprintln(m.Stderr, "error:", message(err))
					continue
				}
				if asJSON {
					if err := json.NewEncoder(m.Stdout).Encode(resp); err != nil {
						return err
					}
					continue
				}
				printResponse(m.Stdout, resp)
			}
			return sc.Err()
		},
	}
	cmd.Flags().StringVar(&user, "user", "me", "user id")
	cmd.Flags().StringVar(&thread, "thread", "", "thread id (default: a new thread)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each answer as a JSON line")
	return cmd
}

// printResponse renders an answer for a person at a terminal.
func printResponse(w io.Writer, r *agent.Response) {
	fmt.Fprintf(w, "memento> %s\n", r.Reply)
	for i, t := range r.Titles {
		fmt.Fprintf(w, "  %d. %s (%d) [%s] %s\n", i+1, t.Title, t.Year, strings.Join(t.Genres, ", "), t.ID)
		if len(t.Why) > 0 {
			fmt.Fprintf(w, "     why: %s\n", strings.Join(t.Why, "; "))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	ac, _ := json.Marshal(r.ActiveContext)
	fmt.Fprintf(w, "  context: %s\n", ac)
}

// replayLine is one input line of `memento replay`.
type replayLine struct {
	User   string `json:"user"`
	Thread string `json:"thread"`
	Text   string `json:"text"`
}

func (m *Main) replayCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Replay scripted conversations through the agent, one JSON answer per line",
		Long: `Replay reads JSON lines {"user","thread","text"} (FILE, or - for standard input) and
writes one JSON answer per input line, in the shape of POST /v1/chat. Without --db
(or MEMENTO_DB) it uses a fresh temporary store, so runs are reproducible. The
background jobs of each turn (summaries) finish before the next line is read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			in, closeIn, err := openInput(m.Stdin, args[0])
			if err != nil {
				return err
			}
			defer closeIn()
			if err := m.scratchDB(cmd, "replay.db"); err != nil {
				return err
			}
			app, ag, err := m.agentWithWorkers(ctx)
			if err != nil {
				return err
			}
			dec := json.NewDecoder(in)
			enc := json.NewEncoder(m.Stdout)
			for n := 1; ; n++ {
				var line replayLine
				if err := dec.Decode(&line); err == io.EOF {
					return nil
				} else if err != nil {
					return fmt.Errorf("replay %s: line %d: %w", args[0], n, err)
				}
				resp, err := ag.Turn(ctx, m.Config.Tenant, agent.Request{User: line.User, Thread: line.Thread, Message: line.Text})
				if err != nil {
					return fmt.Errorf("replay %s: line %d: %w", args[0], n, err)
				}
				if asJSON {
					if err := enc.Encode(resp); err != nil {
						return err
					}
				} else {
					printResponse(m.Stdout, resp)
				}
				if err := app.WaitForJobs(ctx, time.Minute); err != nil {
					return err
				}
			}
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines (the default prints for a person)")
	return cmd
}
