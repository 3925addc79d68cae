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
	"strconv"
	"syscall"
	"time"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/fsck"
)

// Exit codes of `strata check` (and `strata repair`).
const (
	exitClean     = 0 // no damage found
	exitDamaged   = 1 // damage found (check) or the repair failed
	exitUnchecked = 2 // could not check: bad arguments, unreadable or locked data dir
)

// exitError carries a process exit code out of run.
type exitError struct {
	code int
	err  error // nil when the output already said everything
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// parseError is the exit for a flag parse failure: 0 for --help.
func parseError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return &exitError{code: exitClean}
	}
	return &exitError{code: exitUnchecked, err: err}
}

// checkCmd is `strata check --data-dir DIR [--json]`: an offline, read-only
// check of a data directory.
func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", "", "data directory to check (the server must be stopped)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	root := fs.String("root-path", app.Defaults().RootPath, "object-storage root path of the data files (the server's rootPath)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: strata check --data-dir DIR [--json]")
		fmt.Fprintln(stderr, "exit status: 0 clean, 1 damage found, 2 could not check")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if *dir == "" || fs.NArg() != 0 {
		fs.Usage()
		return &exitError{code: exitUnchecked, err: errors.New("check: --data-dir is required")}
	}
	if fi, err := os.Stat(*dir); err != nil || !fi.IsDir() {
		return &exitError{code: exitUnchecked, err: fmt.Errorf("check: %s is not a readable directory", *dir)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := fsck.Check(ctx, *dir, fsck.Checkers(*root))
	write := r.WriteText
	if *asJSON {
		write = r.WriteJSON
	}
	if err := write(stdout); err != nil {
		return &exitError{code: exitUnchecked, err: err}
	}
	switch {
	case len(r.Damage) > 0:
		return &exitError{code: exitDamaged}
	case len(r.Incomplete) > 0:
		return &exitError{code: exitUnchecked}
	}
	return nil
}

// repairCmd is `strata repair --data-dir DIR --drop-segment ID | --cut-wal
// PCHANNEL`: the explicit way to accept a loss. Every action is printed.
func repairCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", "", "data directory to repair (the server must be stopped)")
	var drops []int64
	fs.Func("drop-segment", "mark segment `ID` Dropped, accepting the loss of its rows (repeatable)", func(s string) error {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("bad segment ID %q", s)
		}
		drops = append(drops, id)
		return nil
	})
	cut := fs.String("cut-wal", "", "cut the WAL of `PCHANNEL` at its first damaged record, accepting the loss of every later record, "+
		"and pad it past every offset the meta store references")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: strata repair --data-dir DIR (--drop-segment ID ... | --cut-wal PCHANNEL)")
		fmt.Fprint(stderr, `
Run only with the server stopped (both refuse while it holds meta.db), and
after `+"`strata check`"+` has named the damage. Nothing is deleted.

--drop-segment ID marks the segment Dropped: its rows are lost; garbage
  collection removes its files after the retention period.
--cut-wal PCHANNEL cuts the pchannel's WAL at its first damage: the bytes
  from there on move to <segment>.damaged files and later segment files are
  renamed <name>.damaged. Every record from the damage on is lost (what was
  already flushed to binlogs stays served). The pchannel is then padded with
  filler time ticks until its end is past every offset the meta store
  references (channel checkpoints, segment positions) and the end before
  the cut, so that records appended after the repair are never skipped by a
  consumer as already persisted, and segments still Sealed get their Flush
  message again. PCHANNEL is the pchannel= that strata check prints.
  Running it again is safe (it only pads what an interrupted run left).
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseError(err)
	}
	if *dir == "" || fs.NArg() != 0 || (len(drops) == 0 && *cut == "") {
		fs.Usage()
		return &exitError{code: exitUnchecked, err: errors.New("repair: --data-dir and an action (--drop-segment or --cut-wal) are required")}
	}
	ctx := context.Background()
	for _, id := range drops {
		loss, err := fsck.DropSegment(ctx, *dir, id, time.Now())
		if err != nil {
			return &exitError{code: exitDamaged, err: fmt.Errorf("repair: %w", err)}
		}
		fmt.Fprintln(stdout, loss.String())
	}
	if *cut != "" {
		if err := cutWAL(ctx, *dir, *cut, stdout, stderr); err != nil {
			return &exitError{code: exitDamaged, err: fmt.Errorf("repair: %w", err)}
		}
	}
	return nil
}

// cutWAL cuts the local WAL of pchannel in dataDir at its first damaged
// record, pads it past every offset the meta store references, and prints
// what it did (the same is logged to stderr).
func cutWAL(ctx context.Context, dataDir, pchannel string, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := fsck.CutWAL(ctx, dataDir, pchannel, 0, logger)
	for _, l := range res.Lines() {
		fmt.Fprintln(stdout, l)
	}
	if err != nil {
		return fmt.Errorf("--cut-wal %s: %w", pchannel, err)
	}
	return nil
}
