// Command memento is Memento's one binary: the server, the terminal chat,
// the importers, evaluations and benchmarks.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	m := NewMain()
	if err := m.ParseFlags(ctx, os.Args[1:]); errors.Is(err, pflag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "memento:", message(err))
		os.Exit(2)
	}
	err := m.Run(ctx)
	if err == nil && m.Serving() {
		<-ctx.Done()
		m.Logger.Info("shutting down")
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cerr := m.Close(closeCtx); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "memento:", message(err))
		os.Exit(1)
	}
}

// message is what a user sees of an error: the application message when
// there is one, else the error itself (the CLI user is the operator).
func message(err error) string {
	var e *memento.Error
	if errors.As(err, &e) {
		if e.Code == memento.EINTERNAL && e.Err != nil {
			return e.Message + ": " + e.Err.Error()
		}
		return e.Message
	}
	return err.Error()
}

// Main is the program: its configuration, its open components and the
// command tree. End-to-end tests drive it the way main does.
type Main struct {
	Config Config
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Logger *slog.Logger

	app       *engine.Engine
	root      *cobra.Command
	args      []string
	serving   bool
	serverURL string
	limits    limitsConfig
	tempDirs  []string
	// experiment is the study serve --experiment runs; experimentSeed,
	// when not 0, seeds its arm assignment (for scripted runs).
	experiment     string
	experimentSeed uint64
}

// NewMain returns a Main wired to the process's standard streams and
// environment.
func NewMain() *Main {
	return &Main{
		Config: DefaultConfig(),
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
	}
}

// ParseFlags reads the environment and the arguments into Config and the
// command's flags, once, and checks them, so a bad value fails before
// anything is opened; Run then executes that command.
func (m *Main) ParseFlags(ctx context.Context, args []string) error {
	if err := m.Config.ApplyEnv(m.Getenv); err != nil {
		return err
	}
	m.args = args
	m.root = m.commands()
	m.root.SetArgs(args)
	m.root.SetIn(m.Stdin)
	m.root.SetOut(m.Stdout)
	m.root.SetErr(m.Stderr)
	// Cobra adds its help and completion commands only when it executes;
	// they are added now so Find knows them.
	m.root.InitDefaultHelpCmd()
	m.root.InitDefaultCompletionCmd(args...)
	cmd, rest, err := m.root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			_ = cmd.Help()
		}
		return err
	}
	// Cobra parses again whatever Run gives it, and a list flag parsed
	// twice holds every value twice, so once the flags are parsed here Run
	// gives it only the command's path and its positional arguments.
	m.root.SetArgs(commandLine(cmd, cmd.Flags().Args()))
	if err := m.Config.Validate(); err != nil {
		return err
	}
	m.Logger = newLogger(m.Stderr, m.Config.LogLevel, m.Config.LogFormat)
	return nil
}

// Run executes the command. serve returns once the server listens; the
// caller waits and then calls Close.
func (m *Main) Run(ctx context.Context) error {
	if m.root == nil {
		if err := m.ParseFlags(ctx, m.args); err != nil {
			return err
		}
	}
	return m.root.ExecuteContext(ctx)
}

// URL is the base URL of the server serve started.
func (m *Main) URL() string { return m.serverURL }

// Serving reports whether Run started a server that is still up.
func (m *Main) Serving() bool { return m.serving }

// Close stops the server and closes what the command opened.
func (m *Main) Close(ctx context.Context) error {
	m.serving = false
	var err error
	if m.app != nil {
		err = m.app.Close(ctx)
		m.app = nil
	}
	for _, dir := range m.tempDirs {
		os.RemoveAll(dir)
	}
	m.tempDirs = nil
	return err
}

// tempDir makes a folder that Close removes.
func (m *Main) tempDir() (string, error) {
	dir, err := os.MkdirTemp("", "memento-")
	if err != nil {
		return "", err
	}
	m.tempDirs = append(m.tempDirs, dir)
	return dir, nil
}

// scratchDB points the store at a new file in a temporary folder that
// Close removes, unless --db or MEMENTO_DB names one, so that a replay or
// an evaluation starts from nothing and leaves nothing behind.
func (m *Main) scratchDB(cmd *cobra.Command, name string) error {
	if m.dbGiven(cmd) {
		return nil
	}
	dir, err := m.tempDir()
	if err != nil {
		return err
	}
	m.Config.DB = dir + "/" + name
	return nil
}

// dbGiven reports whether --db or MEMENTO_DB names the store.
func (m *Main) dbGiven(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("db") || m.Getenv("MEMENTO_DB") != ""
}

// App returns the open components, opening them on first use.
func (m *Main) App(ctx context.Context) (*engine.Engine, error) {
	if m.app != nil {
		return m.app, nil
	}
	app, err := engine.Open(ctx, m.Config.Config, m.Logger)
	if err != nil {
		return nil, err
	}
	m.app = app
	return app, nil
}

// ExistingApp is App for the commands that read or edit what a store
// already holds (jobs, keys list and revoke, a user's memories,
// preferences and profile, studies): an SQLite file that does not exist
// is refused, naming the path, rather than made. A mistyped --db, or a
// command run in another folder than the server, would otherwise answer
// from a new, empty store and leave its files behind. Commands that put
// data in (serve, chat, imports, keys create) make the store as App does.
func (m *Main) ExistingApp(ctx context.Context) (*engine.Engine, error) {
	if m.app == nil {
		if err := storeExists(m.Config.DB); err != nil {
			return nil, err
		}
	}
	return m.App(ctx)
}

// storeExists refuses an SQLite path where there is no file; PostgreSQL
// URLs, SQLite URIs and in-memory stores are left to the store to judge.
// Errors: ENOTFOUND.
func storeExists(dsn string) error {
	if engine.StoreKind(dsn) != engine.KindSQLite || dsn == ":memory:" || strings.HasPrefix(strings.ToLower(dsn), "file:") {
		return nil
	}
	if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
		return memento.Errorf(memento.ENOTFOUND, "--db (MEMENTO_DB) %s: no store there; `memento serve` makes one on first start (check the path, or run this where the server runs)", dsn)
	}
	return nil
}

// commandLine is the argument list that selects cmd and hands it
// positional, with no flags. The positional arguments follow "--", so that
// one that looks like a flag or names a subcommand stays an argument.
func commandLine(cmd *cobra.Command, positional []string) []string {
	var line []string
	for c := cmd; c.HasParent(); c = c.Parent() {
		line = append([]string{c.Name()}, line...)
	}
	if len(positional) > 0 {
		line = append(append(line, "--"), positional...)
	}
	return line
}

func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(strings.ToUpper(level)))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func (m *Main) commands() *cobra.Command {
	root := &cobra.Command{
		Use:           "memento",
		Short:         "Memory for conversational agents",
		Long:          "Memento gives an agent short-term memory inside a thread and long-term memory of each user.\nRun `memento serve` for the API and web UI on " + m.Config.Addr + ".",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	m.Config.AddGlobalFlags(root.PersistentFlags())
	root.AddCommand(
		m.serveCommand(),
		m.versionCommand(),
		m.catalogCommand(),
		m.jobsCommand(),
		m.chatCommand(),
		m.replayCommand(),
		m.evalCommand(),
		m.benchCommand(),
		m.prefsCommand(),
		m.llmCommand(),
		m.reembedCommand(),
		m.eventsCommand(),
		m.profileCommand(),
		m.snapshotCommand(),
		m.ingestCommand(), m.memoriesCommand(), m.recallCommand(),
		m.tortureCommand(),
		m.experimentCommand(),
		m.mcpCommand(),
		m.keysCommand(),
		m.migrateCommand(),
		m.optimizeCommand(),
	)
	return root
}
