// Command strata is the Strata vector database.
//
//	strata                         = strata standalone with defaults
//	strata standalone [flags]      serve the Milvus API (gRPC and REST v2) on --addr
//	strata run ROLE [flags]        run a cluster role: coordinator, querynode or datanode
//	strata config [--config FILE]  print the configuration document (defaults, or FILE applied)
//	strata binlog dump FILE        print a binlog's descriptor and rows
//	strata bench [flags]           measure a vector index: build time, memory, recall and QPS
//	strata check --data-dir DIR    check a stopped server's data dir offline (exit 0 clean, 1 damaged, 2 unchecked)
//	strata repair --data-dir DIR   accept a loss: --drop-segment ID, --cut-wal PCHANNEL
//	strata backup create|list|restore  back up collections to a directory, list, restore
//	strata version                 print the version, commit and build date
//	strata help [COMMAND]          print the commands, or a command's flags
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/version"
)

func main() {
	code, err := exitCode(run(os.Args[1:], os.Stdout, os.Stderr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata:", err)
	}
	os.Exit(code)
}

// exitCode is the process exit status of run's result, and the error to
// print (nil when there is nothing to say): an exitError's code, else 1 for
// an error and 0 for none.
func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.err
	}
	return 1, err
}

// usage is the text of `strata help`.
const usage = `usage: strata [command] [flags]

commands:
  standalone [flags]             serve the Milvus API (gRPC and REST v2); the default command
  run ROLE [flags]               run one cluster role as its own process: coordinator (the
                                 coordinators and, for now, the Milvus API), querynode or
                                 datanode, on etcd + Kafka + S3 (docs/design/cluster.md)
  config [--config FILE]         print the configuration document: the defaults, or FILE
                                 applied to them (and checked)
  binlog dump [--max-rows N] FILE
                                 print a binlog's descriptor and rows
  bench [flags]                  measure a vector index: build time, memory, recall and QPS
  check --data-dir DIR [--json]  check a stopped server's data dir offline and read-only: every
                                 file the metadata references (exists, size, decodes, row counts);
                                 exit status 0 clean, 1 damage found, 2 could not check
  repair --data-dir DIR --drop-segment ID | --cut-wal PCHANNEL
                                 accept a loss on the operator's word: mark a damaged segment
                                 Dropped (its rows are lost), or cut a WAL at its first bad record
  backup create|list|restore     back up collections of a running server to a directory
                                 (consistent at a flush timestamp), list backups, restore them
                                 (under new names allowed)
  version                        print the version, commit and build date
  help [COMMAND]                 print this text, or COMMAND's flags

Run "strata help COMMAND" or "strata COMMAND --help" for a command's flags.`

// command returns the subcommand called name; each takes its arguments and
// the output streams (flag usage goes to stderr).
func command(name string) (func(args []string, stdout, stderr io.Writer) error, bool) {
	switch name {
	case "standalone":
		return func(args []string, _, stderr io.Writer) error { return standalone(args, stderr) }, true
	case "run":
		return func(args []string, _, stderr io.Writer) error { return runRole(args, stderr) }, true
	case "config":
		return configCmd, true
	case "binlog":
		return binlog, true
	case "bench":
		return benchCmd, true
	case "check":
		return checkCmd, true
	case "repair":
		return repairCmd, true
	case "backup":
		return backupCmd, true
	case "version":
		return versionCmd, true
	}
	return nil, false
}

// versionCmd is `strata version`.
func versionCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: strata version\n\nprints the Milvus API version Strata implements, the commit and the build date")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("version: unexpected argument %q", fs.Arg(0))
	}
	return version.Get().Write(stdout)
}

func run(args []string, stdout, stderr io.Writer) error {
	cmd := "standalone"
	if len(args) > 0 {
		switch a := args[0]; {
		case a == "-h" || a == "-help" || a == "--help" || a == "help":
			return help(args[1:], stdout)
		case a != "" && a[0] != '-':
			cmd, args = a, args[1:]
		}
	}
	f, ok := command(cmd)
	if !ok {
		return fmt.Errorf("unknown command %q (run \"strata help\" for the list)", cmd)
	}
	err := f(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		// The flag package printed the usage; asking for it is no failure.
		return nil
	}
	return err
}

// help is `strata help [COMMAND]`: the command list, or COMMAND's usage and
// flags, on stdout.
func help(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	if args[0] == "help" {
		fmt.Fprintln(stdout, usage)
		return nil
	}
	if _, ok := command(args[0]); !ok {
		return fmt.Errorf("help: unknown command %q (run \"strata help\" for the list)", args[0])
	}
	return run([]string{args[0], "--help"}, stdout, stdout)
}

func standalone(args []string, stderr io.Writer) error {
	cfg, proc, level, err := standaloneConfig(args, stderr)
	if err != nil {
		return err
	}
	return serve(cfg, proc, level, stderr)
}

// serve runs a server process with cfg until SIGTERM or Ctrl-C.
func serve(cfg app.Config, proc processConfig, level slog.Level, stderr io.Writer) error {
	cfg.LogLevel = new(slog.LevelVar)
	cfg.LogLevel.Set(level)
	var handler slog.Handler
	switch proc.LogFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	case "json":
		handler = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	default:
		return fmt.Errorf("bad --log-format %q: text or json", proc.LogFormat)
	}
	logger := slog.New(handler)
	if limit := applyMemoryLimit(proc.MemoryLimit); limit > 0 {
		logger.Info("memory limit", "bytes", limit)
	}

	srv, err := app.Listen(cfg, logger)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	logger.Info("strata stopped", "role", cfg.Role)
	return nil
}

// standaloneConfig reads `strata standalone`'s flags and --config file: the
// file applies to the defaults and the flags given apply over it.
func standaloneConfig(args []string, stderr io.Writer) (app.Config, processConfig, slog.Level, error) {
	return serverConfig(app.RoleStandalone, "usage: strata standalone [flags]\n\nserves the Milvus API (gRPC and REST v2) until SIGTERM or Ctrl-C", args, stderr)
}

// serverConfig reads a server process's flags and --config file (the file
// applies to the defaults, the flags given over it) for role; usage heads
// the flag list.
func serverConfig(role, usage string, args []string, stderr io.Writer) (app.Config, processConfig, slog.Level, error) {
	cfg := app.Defaults()
	fs := flag.NewFlagSet(role, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory holding the meta store, WAL and object storage")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address of the Milvus API (gRPC and REST v2)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", cfg.MetricsAddr, "address of /metrics and /healthz (empty disables)")
	fs.StringVar(&cfg.InternalAddr, "internal-addr", cfg.InternalAddr, "address of the internal RPC services other cluster processes call (empty: none)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error (PUT /log/level on the metrics port changes it)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	configFile := fs.String("config", "", "JSON file of settings (see README, \"Configuration file\"); flags given win over it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
	}
	var proc processConfig
	var level slog.Level
	if err := fs.Parse(args); err != nil {
		return cfg, proc, level, err
	}
	if *configFile != "" {
		// The file applies to the defaults, then the flags given apply again.
		given := map[string]string{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
		cfg = app.Defaults()
		cfg.Role = role
		if err := loadConfigFile(*configFile, &cfg, &proc); err != nil {
			return cfg, proc, level, err
		}
		for name, value := range given {
			if err := fs.Set(name, value); err != nil {
				return cfg, proc, level, err
			}
		}
	}
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return cfg, proc, level, fmt.Errorf("bad --log-level: %w", err)
	}
	if err := applySecurityEnv(&cfg, os.Getenv); err != nil {
		return cfg, proc, level, err
	}
	proc.LogFormat = *logFormat
	cfg.Role = role
	return cfg, proc, level, nil
}

// binlogUsage is the usage line of `strata binlog`.
const binlogUsage = "usage: strata binlog dump [--max-rows N] FILE"

// binlog is `strata binlog dump [--max-rows N] FILE`.
func binlog(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("binlog dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxRows := fs.Int("max-rows", 100, "rows to print per event (0 = all)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, binlogUsage)
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "dump" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fs.Usage()
			return flag.ErrHelp
		}
		return errors.New(binlogUsage)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(binlogUsage)
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	return storage.Dump(stdout, data, *maxRows)
}

// runUsage is the usage line of `strata run`.
const runUsage = "usage: strata run coordinator|proxy|querynode|datanode --config FILE [flags]"

// runRole is `strata run ROLE [flags]`: one cluster role as its own process.
func runRole(args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(stderr, runUsage)
			return flag.ErrHelp
		}
		return errors.New(runUsage)
	}
	role := args[0]
	switch role {
	case app.RoleCoordinator, app.RoleProxy, app.RoleQueryNode, app.RoleDataNode:
	default:
		return fmt.Errorf("run: unknown role %q (coordinator, proxy, querynode or datanode)", role)
	}
	cfg, proc, level, err := serverConfig(role, "usage: strata run "+role+" [flags]\n\nruns the "+role+
		" role of a cluster on etcd + Kafka + S3 (docs/design/cluster.md) until SIGTERM or Ctrl-C", args[1:], stderr)
	if err != nil {
		return err
	}
	return serve(cfg, proc, level, stderr)
}
