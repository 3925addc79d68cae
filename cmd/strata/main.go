// Command strata is the Strata vector database.
//
//	strata                         = strata standalone with defaults
//	strata standalone [flags]      serve the Milvus API (gRPC and REST v2) on --addr
//	strata binlog dump FILE        print a binlog's descriptor and rows
//	strata bench [flags]           measure a vector index: build time, memory, recall and QPS
//	strata check --data-dir DIR    check a stopped server's data dir offline (exit 0 clean, 1 damaged, 2 unchecked)
//	strata repair --data-dir DIR   accept a loss: --drop-segment ID, --cut-wal PCHANNEL
//	strata version                 print the version
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
)

// version is the Milvus API version Strata reports.
const version = "v2.6.6"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
			err = ee.err
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "strata:", err)
		}
		os.Exit(code)
	}
}

// usage is the text of `strata help`.
const usage = `usage: strata [command] [flags]

commands:
  standalone [flags]             serve the Milvus API (gRPC and REST v2); the default command
  binlog dump [--max-rows N] FILE
                                 print a binlog's descriptor and rows
  bench [flags]                  measure a vector index: build time, memory, recall and QPS
  check --data-dir DIR [--json]  check a stopped server's data dir offline and read-only: every
                                 file the metadata references (exists, size, decodes, row counts);
                                 exit status 0 clean, 1 damage found, 2 could not check
  repair --data-dir DIR --drop-segment ID | --cut-wal PCHANNEL
                                 accept a loss on the operator's word: mark a damaged segment
                                 Dropped (its rows are lost), or cut a WAL at its first bad record
  version                        print the version
  help                           print this text

Run "strata COMMAND --help" for a command's flags.`

func run(args []string, stdout, stderr io.Writer) error {
	cmd := "standalone"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "standalone":
		return standalone(args, stderr)
	case "binlog":
		return binlog(args, stdout)
	case "bench":
		return benchCmd(args, stdout, stderr)
	case "check":
		return checkCmd(args, stdout, stderr)
	case "repair":
		return repairCmd(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "strata", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q (try: standalone, binlog dump FILE, bench, check, repair, version, help)", cmd)
}

func standalone(args []string, stderr io.Writer) error {
	cfg := app.Defaults()
	fs := flag.NewFlagSet("standalone", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory holding the meta store, WAL and object storage")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address of the Milvus API (gRPC and REST v2)")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", cfg.MetricsAddr, "address of /metrics and /healthz (empty disables)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	configFile := fs.String("config", "", "JSON file of tuning settings (see README, \"Configuration file\")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var proc processConfig
	if *configFile != "" {
		if err := loadConfigFile(*configFile, &cfg, &proc); err != nil {
			return err
		}
	}
	if err := applySecurityEnv(&cfg, os.Getenv); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("bad --log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
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
	logger.Info("strata stopped")
	return nil
}

func binlog(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("binlog dump", flag.ContinueOnError)
	maxRows := fs.Int("max-rows", 100, "rows to print per event (0 = all)")
	if len(args) == 0 || args[0] != "dump" {
		return errors.New("usage: strata binlog dump [--max-rows N] FILE")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: strata binlog dump [--max-rows N] FILE")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	return storage.Dump(stdout, data, *maxRows)
}
