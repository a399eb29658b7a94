package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/mcp"
)

func (m *Main) mcpCommand() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve Memento's memory tools to an MCP client over stdio",
		Long: `Serve Memento's memory as Model Context Protocol tools over standard input and
output, for an MCP client that starts this command (Claude Desktop, an IDE, an
agent framework). The tools are add_memory, search_memory, get_context,
list_memories, update_memory, delete_memory, delete_all_memories, recommend and
record_event; the background jobs (extraction, summaries, profiles) run in this
process. Logs go to standard error.

The tools act for --tenant, and for any user a call names. With --key (or
MEMENTO_KEY) they act for that API key instead (memento keys create): its
tenant, its user when it is scoped to one (calls may then leave user out), and
only reads for a read key.

The same tools are served over HTTP at /mcp by memento serve.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if key == "" {
				key = m.Getenv("MEMENTO_KEY")
			}
			return m.serveMCP(cmd.Context(), key, cmd.Flags().Changed("tenant") || m.Getenv("MEMENTO_TENANT") != "")
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "API key the tools act for: its tenant and, for a user key, its user (MEMENTO_KEY)")
	return cmd
}

// serveMCP serves the MCP tools on the process's standard streams until
// the client closes them or ctx ends.
func (m *Main) serveMCP(ctx context.Context, key string, tenantGiven bool) error {
	app, err := m.App(ctx)
	if err != nil {
		return err
	}
	srv, err := m.mcpServer(ctx, app)
	if err != nil {
		return err
	}
	if key != "" {
		p, err := keyPrincipal(ctx, app, key)
		if err != nil {
			return err
		}
		if tenantGiven && p.Tenant != m.Config.Tenant {
			return memento.Errorf(memento.EFORBIDDEN, "--tenant %s differs from the key's tenant %s; leave --tenant out with --key", m.Config.Tenant, p.Tenant)
		}
		srv.Principal = &p
		app.Logger.Info("mcp acts for key", "key", p.KeyID, "tenant", p.Tenant, "user", p.User, "role", p.Role)
	}
	if err := app.StartWorkers(ctx); err != nil {
		return err
	}
	app.Logger.Info("memento mcp serving on stdio", "version", Version, "tenant", srv.Tenant)
	return srv.Run(ctx, m.Stdin, m.Stdout)
}

// keyPrincipal looks an API key up in the store and returns whom it acts
// for. Errors: EUNAUTHORIZED for a key that is malformed, unknown or
// revoked.
func keyPrincipal(ctx context.Context, a *engine.Engine, key string) (memento.Principal, error) {
	if !memento.LooksLikeAPIKey(key) {
		return memento.Principal{}, memento.Errorf(memento.EUNAUTHORIZED, "--key is not a Memento API key (keys begin with %q; create one with memento keys create)", memento.KeyPrefix)
	}
	k, err := a.Store.KeyByHash(ctx, memento.HashAPIKey(key))
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return memento.Principal{}, memento.Errorf(memento.EUNAUTHORIZED, "the API key is not known to the store %s", engine.RedactURL(a.Config.DB))
	}
	if err != nil {
		return memento.Principal{}, err
	}
	if k.RevokedAt != nil {
		return memento.Principal{}, memento.Errorf(memento.EUNAUTHORIZED, "API key %s was revoked", k.ID)
	}
	return k.Principal(), nil
}

// mcpServer returns the MCP server over the engine's store, recall, agent and
// catalog: the tools of `memento mcp` and of /mcp on `memento serve`.
// Calls without a key act for the configured tenant.
func (m *Main) mcpServer(ctx context.Context, a *engine.Engine) (*mcp.Server, error) {
	cat, err := a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ag, err := a.Agent(ctx)
	if err != nil {
		return nil, err
	}
	asm, err := a.Assembler(ctx)
	if err != nil {
		return nil, err
	}
	return &mcp.Server{
		Store:     a.Store,
		Recall:    asm,
		Agent:     ag,
		Catalog:   cat,
		JobsFor:   a.MessageJobs,
		EventJobs: a.EventJobs,
		Reindex:   a.Reindex,
		Lag:       a.Store,
		MaxLag:    m.Config.HTTP.MaxQueueLag,
		Tenant:    a.Config.Tenant,
		Version:   Version,
		Logger:    a.Logger,
	}, nil
}
