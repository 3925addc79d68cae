package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/backup"
	"github.com/strata-db/strata/internal/objstore"
)

const backupUsage = `usage: strata backup create|list|restore [flags]

  create   --out DIR [--name NAME] [--collections a,b] [server flags]
           flush the collections, copy their segments into DIR/NAME and write its manifest
  list     --out DIR
           list the backups in DIR
  restore  --from DIR --name NAME [--collections a,b] [--rename old=new,...] [--rbac] [server flags]
           create the collections (new names allowed) and import the backup's rows into them

server flags: --addr HOST:PORT, --user, --password, --db, and where the server's object
store is: --data-dir DIR (standalone) or --config FILE (its engines and rootPath)`

// backupCmd is `strata backup create|list|restore`: see internal/backup.
func backupCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprintln(stderr, backupUsage)
		if len(args) == 0 {
			return errors.New("backup: a subcommand (create, list, restore) is required")
		}
		return flag.ErrHelp
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "create":
		return backupCreate(ctx, args[1:], stdout, stderr)
	case "list":
		return backupList(ctx, args[1:], stdout, stderr)
	case "restore":
		return backupRestore(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("backup: unknown subcommand %q (create, list, restore)", args[0])
}

// serverFlags are the flags that reach a running server: its API and its
// object store.
type serverFlags struct {
	addr, user, password, db string
	dataDir, config, root    string
}

func (s *serverFlags) register(fs *flag.FlagSet) {
	d := app.Defaults()
	fs.StringVar(&s.addr, "addr", "localhost:19530", "the server's Milvus API address")
	fs.StringVar(&s.user, "user", "", "user name, when the server has authorization on")
	fs.StringVar(&s.password, "password", "", "password of --user")
	fs.StringVar(&s.db, "db", "default", "database")
	fs.StringVar(&s.dataDir, "data-dir", d.DataDir, "the server's data directory (its object store is DIR/storage)")
	fs.StringVar(&s.config, "config", "", "the server's configuration file: its object-store engine (S3) and rootPath")
	fs.StringVar(&s.root, "root-path", "", "the server's object-storage root path (default: the configuration's, \"files\")")
}

// open connects to the server's API and opens its object store.
func (s *serverFlags) open(ctx context.Context) (backup.API, objstore.Store, string, func() error, error) {
	cfg := app.Defaults()
	if s.config != "" {
		if err := loadConfigFile(s.config, &cfg, nil); err != nil {
			return nil, nil, "", nil, err
		}
	}
	if s.dataDir != "" {
		cfg.DataDir = s.dataDir
	}
	if s.root != "" {
		cfg.RootPath = s.root
	}
	if cfg.Engines.Objects.Type != app.EngineS3 {
		if fi, err := os.Stat(cfg.DataDir); err != nil || !fi.IsDir() {
			return nil, nil, "", nil, fmt.Errorf("backup: the server's data directory %s is not there (--data-dir, or --config for S3)", cfg.DataDir)
		}
	}
	store, closeStore, err := app.OpenObjectStore(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, "", nil, err
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256 << 20)),
	}
	if s.user != "" {
		tok := base64.StdEncoding.EncodeToString([]byte(s.user + ":" + s.password))
		opts = append(opts, grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, o ...grpc.CallOption) error {
			return invoker(metadata.AppendToOutgoingContext(ctx, "authorization", tok), method, req, reply, cc, o...)
		}))
	}
	conn, err := grpc.NewClient(s.addr, opts...)
	if err != nil {
		return nil, nil, "", nil, errors.Join(err, closeStore())
	}
	return milvuspb.NewMilvusServiceClient(conn), store, cfg.RootPath, func() error { return errors.Join(conn.Close(), closeStore()) }, nil
}

// openLocation opens a backup location: a directory.
func openLocation(dir string) (objstore.Store, error) {
	if dir == "" {
		return nil, errors.New("backup: the backup location (a directory) is required")
	}
	if strings.Contains(dir, "://") {
		return nil, fmt.Errorf("backup: %s: only a directory is supported as a backup location yet", dir)
	}
	return app.OpenDirectory(dir)
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func backupCreate(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("backup create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf serverFlags
	sf.register(fs)
	out := fs.String("out", "", "backup location: a directory")
	name := fs.String("name", "", "backup name (default backup_YYYYMMDD_HHMMSS)")
	colls := fs.String("collections", "", "comma-separated collections (default: every collection of --db)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("backup create: unexpected argument %q", fs.Arg(0))
	}
	if *name == "" {
		*name = "backup_" + time.Now().UTC().Format("20060102_150405")
	}
	dst, err := openLocation(*out)
	if err != nil {
		return err
	}
	api, src, root, closeFn, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	start := time.Now()
	m, err := backup.Create(ctx, api, src, dst, backup.CreateOptions{
		Name: *name, DB: sf.db, Collections: splitList(*colls), Server: sf.addr, RootPath: root,
		Logger: slog.New(slog.NewTextHandler(stderr, nil)),
	})
	if err != nil {
		return err
	}
	var rows int64
	for _, c := range m.Collections {
		rows += c.Rows
	}
	fmt.Fprintf(stdout, "backup %s: %d collections, %d rows, in %s\n", m.Name, len(m.Collections), rows, time.Since(start).Round(time.Millisecond))
	return nil
}

func backupList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "backup location: a directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dst, err := openLocation(*out)
	if err != nil {
		return err
	}
	ms, err := backup.List(ctx, dst)
	if err != nil {
		return err
	}
	for _, m := range ms {
		var names []string
		var rows int64
		for _, c := range m.Collections {
			names = append(names, c.Name)
			rows += c.Rows
		}
		fmt.Fprintf(stdout, "%s\t%s\tdb=%s\trows=%d\tcollections=%s\n", m.Name, m.CreateTime, m.DB, rows, strings.Join(names, ","))
	}
	return nil
}

func backupRestore(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("backup restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf serverFlags
	sf.register(fs)
	from := fs.String("from", "", "backup location: a directory")
	name := fs.String("name", "", "the backup to restore")
	colls := fs.String("collections", "", "comma-separated collections of the backup (default: all)")
	rename := fs.String("rename", "", "comma-separated old=new: restore collection old as new")
	rbac := fs.Bool("rbac", false, "restore the backup's users, roles and grants too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("backup restore: unexpected argument %q", fs.Arg(0))
	}
	if *name == "" {
		return errors.New("backup restore: --name is required")
	}
	renames := map[string]string{}
	for _, r := range splitList(*rename) {
		old, nw, ok := strings.Cut(r, "=")
		if !ok || old == "" || nw == "" {
			return fmt.Errorf("backup restore: --rename %q: want old=new", r)
		}
		renames[old] = nw
	}
	src, err := openLocation(*from)
	if err != nil {
		return err
	}
	api, server, _, closeFn, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	start := time.Now()
	res, err := backup.Restore(ctx, api, src, server, backup.RestoreOptions{
		Name: *name, DB: sf.db, Collections: splitList(*colls), Rename: renames, RBAC: *rbac,
		Logger: slog.New(slog.NewTextHandler(stderr, nil)),
	})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	for _, r := range res {
		fmt.Fprintf(stdout, "restored %s as %s: %d rows, %d import jobs\n", r.From, r.To, r.Rows, len(r.Jobs))
	}
	var rows int64
	for _, r := range res {
		rows += r.Rows
	}
	fmt.Fprintf(stdout, "%d rows in %.2fs (%.0f rows/s)\n", rows, secs, float64(rows)/max(secs, 1e-9))
	return nil
}
