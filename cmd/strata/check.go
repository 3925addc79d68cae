package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/strata-db/strata/internal/datanode"
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
	root := fs.String("root-path", datanode.Defaults().RootPath, "object-storage root path of the data files")
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
	cut := fs.String("cut-wal", "", "cut the WAL of `PCHANNEL` at its first damaged record, accepting the loss of every later record")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: strata repair --data-dir DIR (--drop-segment ID ... | --cut-wal PCHANNEL)")
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
		if err := cutWAL(ctx, *dir, *cut, stdout); err != nil {
			return &exitError{code: exitDamaged, err: fmt.Errorf("repair: %w", err)}
		}
	}
	return nil
}

// cutWAL cuts the local WAL of pchannel in dataDir at its first damaged
// record and prints what was cut.
//
// Lead: wire wal/local.Cut here (from the WAL helper's branch): open
// filepath.Join(dataDir, fsck.WALDir, <pchannel dir>), refuse while the
// server holds the data dir, call local.Cut and print the offsets and
// record count lost.
func cutWAL(_ context.Context, _, pchannel string, _ io.Writer) error {
	return fmt.Errorf("--cut-wal %s: cutting a WAL is not available in this build", pchannel)
}
