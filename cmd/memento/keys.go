package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
)

// keysCommand manages API keys: create (the key is printed once), list
// (never the keys) and revoke.
func (m *Main) keysCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create, list and revoke API keys",
		Long: "API keys authenticate callers of `memento serve` (REST, MCP, the web UI) with Authorization: Bearer KEY. " +
			"A key belongs to one tenant (--tenant), may be scoped to one user (--user), and has a role: read, write or admin (admin keys also manage keys at /v1/keys). " +
			"Once a key exists, every request needs one; serve refuses to listen on a non-loopback address until one exists. Only a hash of each key is stored.",
	}
	var (
		user, role string
		asJSON     bool
	)
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a key and print it, once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			k, key, hash, err := memento.NewAPIKey(m.Config.Tenant, user, memento.KeyRole(role), time.Now())
			if err != nil {
				return err
			}
			if err := app.Store.CreateKey(ctx, k, hash); err != nil {
				return err
			}
			out := mhttp.CreatedKey{ID: k.ID, Key: key, Tenant: k.Tenant, User: k.User, Role: k.Role}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(out)
			}
			scope := "every user"
			if k.User != "" {
				scope = "user " + strconv.Quote(k.User)
			}
			fmt.Fprintf(m.Stdout, "%s\n", key)
			fmt.Fprintf(m.Stderr, "created %s key %s for tenant %q, %s. It is shown only now: keep it, and send it as Authorization: Bearer KEY.\n", k.Role, k.ID, k.Tenant, scope)
			return nil
		},
	}
	create.Flags().StringVar(&user, "user", "", "the one user the key reaches (default: every user of the tenant)")
	create.Flags().StringVar(&role, "role", string(memento.KeyWrite), "admin, write or read")
	create.Flags().BoolVar(&asJSON, "json", false, `print {"id","key","tenant","user","role"}`)

	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List keys (of --tenant when given), never the keys themselves",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, err := m.ExistingApp(ctx)
			if err != nil {
				return err
			}
			tenant := ""
			if f := cmd.Flags().Lookup("tenant"); (f != nil && f.Changed) || m.Getenv("MEMENTO_TENANT") != "" {
				tenant = m.Config.Tenant
			}
			ks, err := app.Store.Keys(ctx, tenant)
			if err != nil {
				return err
			}
			if listJSON {
				if ks == nil {
					ks = []memento.APIKey{}
				}
				return json.NewEncoder(m.Stdout).Encode(map[string]any{"keys": ks})
			}
			w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tTENANT\tUSER\tROLE\tCREATED\tREVOKED")
			for _, k := range ks {
				revoked := "-"
				if k.RevokedAt != nil {
					revoked = k.RevokedAt.Format(time.RFC3339)
				}
				u := k.User
				if u == "" {
					u = "*"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Tenant, u, k.Role, k.CreatedAt.Format(time.RFC3339), revoked)
			}
			return w.Flush()
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a key; it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			app, err := m.ExistingApp(ctx)
			if err != nil {
				return err
			}
			if err := app.Store.RevokeKey(ctx, "", args[0]); err != nil {
				return err
			}
			fmt.Fprintf(m.Stderr, "revoked %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// Defaults of the limits.
const (
	defaultKeyRate  = 20
	defaultKeyBurst = 40
)

// limitsConfig are serve's per-key rate limits and per-tenant
// language-model budgets.
type limitsConfig struct {
	KeyRate  float64
	KeyBurst int
	// DailyTokens is every tenant's language-model budget a day; Tenants
	// overrides it for some ("acme=100000,globex=0").
	DailyTokens int64
	Tenants     string
	err         error
}

// addLimitFlags adds the limits' flags to serve, with the MEMENTO_*
// environment as their defaults.
func (m *Main) addLimitFlags(fs *pflag.FlagSet) {
	l := &m.limits
	l.KeyRate, l.KeyBurst = defaultKeyRate, defaultKeyBurst
	env := func(name string, parse func(string) error) {
		if v := m.Getenv(name); v != "" {
			if err := parse(v); err != nil && l.err == nil {
				l.err = memento.Errorf(memento.EINVALID, "%s must be a number, got %q", name, v)
			}
		}
	}
	env("MEMENTO_KEY_RATE", func(v string) (err error) { l.KeyRate, err = strconv.ParseFloat(v, 64); return })
	env("MEMENTO_KEY_BURST", func(v string) (err error) { l.KeyBurst, err = strconv.Atoi(v); return })
	env("MEMENTO_LLM_DAILY_TOKENS", func(v string) (err error) { l.DailyTokens, err = strconv.ParseInt(v, 10, 64); return })
	if v := m.Getenv("MEMENTO_LLM_TENANT_TOKENS"); v != "" {
		l.Tenants = v
	}
	fs.Float64Var(&l.KeyRate, "key-rate", l.KeyRate, "requests a second each API key may send, a token bucket; 0 is no limit (MEMENTO_KEY_RATE)")
	fs.IntVar(&l.KeyBurst, "key-burst", l.KeyBurst, "requests an API key may send at once above its rate (MEMENTO_KEY_BURST)")
	fs.Int64Var(&l.DailyTokens, "llm-daily-tokens", l.DailyTokens, "language-model tokens each tenant may use a day; past them the offline model answers until 00:00 UTC; 0 is no budget (MEMENTO_LLM_DAILY_TOKENS)")
	fs.StringVar(&l.Tenants, "llm-tenant-tokens", l.Tenants, "per-tenant daily token budgets overriding --llm-daily-tokens, such as acme=100000,globex=0 (MEMENTO_LLM_TENANT_TOKENS)")
}

// validate checks the limits.
func (l *limitsConfig) validate() (map[string]int64, error) {
	if l.err != nil {
		return nil, l.err
	}
	switch {
	case l.KeyRate < 0:
		return nil, memento.Errorf(memento.EINVALID, "--key-rate (MEMENTO_KEY_RATE) must not be negative, got %g", l.KeyRate)
	case l.KeyRate > 0 && l.KeyBurst < 1:
		return nil, memento.Errorf(memento.EINVALID, "--key-burst (MEMENTO_KEY_BURST) must be at least 1 with a rate limit, got %d", l.KeyBurst)
	case l.DailyTokens < 0:
		return nil, memento.Errorf(memento.EINVALID, "--llm-daily-tokens (MEMENTO_LLM_DAILY_TOKENS) must not be negative, got %d", l.DailyTokens)
	}
	tenants := map[string]int64{}
	for _, item := range splitList(l.Tenants) {
		name, v, ok := strings.Cut(item, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || strings.TrimSpace(name) == "" || err != nil || n < 0 {
			return nil, memento.Errorf(memento.EINVALID, "--llm-tenant-tokens (MEMENTO_LLM_TENANT_TOKENS) takes tenant=tokens pairs such as acme=100000, got %q", item)
		}
		tenants[strings.TrimSpace(name)] = n
	}
	return tenants, nil
}

// checkServeKeys refuses, before anything starts, to serve a non-loopback
// address while no API key exists.
func (m *Main) checkServeKeys(ctx context.Context, app *engine.Engine) error {
	if mhttp.IsLoopback(m.Config.Addr) {
		return nil
	}
	has, err := app.Store.HasKeys(ctx)
	if err != nil {
		return err
	}
	if !has {
		return memento.Errorf(memento.EINVALID, "refusing to serve %s, which other machines can reach, without an API key: anyone could read every user's memory. "+
			"Create one first with `memento keys create --tenant T --role admin` (same --db), or serve 127.0.0.1", m.Config.Addr)
	}
	return nil
}
