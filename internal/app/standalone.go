// Package app is Strata's composition root: it builds every component from
// its configuration, wires them through their small interfaces, and runs
// them under one errgroup with a defined start and stop order.
//
// Standalone layout of the data directory (with the default, embedded engines):
//
//	{data-dir}/meta.db   meta store (bbolt)
//	{data-dir}/wal/      WAL, one directory per pchannel
//	{data-dir}/storage/  object storage (keys "files/insert_log/…", …)
//
// Config.Engines can move each of the three onto its cluster engine: the
// meta store to etcd, object storage to S3, the WAL to Kafka (see Engines).
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync/atomic"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/api"
	"github.com/strata-db/strata/internal/auth"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rest"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

// Config is the standalone server's configuration.
type Config struct {
	DataDir     string
	Addr        string
	MetricsAddr string
	RootCoord   rootcoord.Config
	DataCoord   datacoord.Config
	DataNode    datanode.Config
	QueryNode   querynode.Config
	Proxy       proxy.Config
	Writer      wal.WriterConfig
	// WAL configures the local WAL (Engines.WALEngine "local").
	WAL wallocal.Config
	// Engines selects the meta store, object store and WAL implementations.
	Engines Engines
	// Security is authentication, RBAC and TLS (off by default, as Milvus).
	Security auth.Config `json:"security"`
	// Pprof serves Go's /debug/pprof/ profiles on the metrics port. Off by
	// default: profiles expose command lines and memory contents.
	Pprof bool `json:"pprof"`
}

// Defaults returns the default standalone configuration.
func Defaults() Config {
	return Config{
		DataDir: "./strata-data", Addr: ":19530", MetricsAddr: ":9091",
		RootCoord: rootcoord.Defaults(), DataCoord: datacoord.Defaults(), DataNode: datanode.Defaults(),
		QueryNode: querynode.Defaults(), Proxy: proxy.Defaults(),
		Writer: wal.WriterConfig{}.Defaults(), WAL: wallocal.Config{}.Defaults(),
		Engines: Engines{}.Defaults(), Security: auth.Defaults(),
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("app: data dir is required")
	}
	if c.DataCoord.RootPath != c.DataNode.RootPath {
		// Garbage collection would take every file the data node writes for an orphan.
		return fmt.Errorf("app: data coordinator root path %q differs from the data node's %q",
			c.DataCoord.RootPath, c.DataNode.RootPath)
	}
	return errors.Join(c.RootCoord.Validate(), c.DataCoord.Validate(), c.Writer.Validate(), c.Engines.Defaults().Validate(),
		c.Security.Validate())
}

// Server is a running standalone server.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	ready   atomic.Bool
	health  []health.Source // set by Run before ready
	grpcLis net.Listener
	httpLis net.Listener
}

// Listen binds the server's ports, so that callers (and tests using port 0)
// learn the addresses before Run.
func Listen(cfg Config, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tlsCfg, err := apiTLS(cfg.Security)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: logger}
	if s.grpcLis, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("app: listen %s: %w", cfg.Addr, err)
	}
	if tlsCfg != nil {
		// TLS under the gRPC/REST split: both are served encrypted.
		s.grpcLis = tls.NewListener(s.grpcLis, tlsCfg)
	}
	if cfg.MetricsAddr != "" {
		if s.httpLis, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			_ = s.grpcLis.Close()
			return nil, fmt.Errorf("app: listen %s: %w", cfg.MetricsAddr, err)
		}
	}
	return s, nil
}

// Addr is the API address: gRPC and REST v2 share it.
// Ready reports whether the server is serving (what /healthz answers).
func (s *Server) Ready() bool { return s.ready.Load() }

func (s *Server) Addr() string { return s.grpcLis.Addr().String() }

// MetricsAddr is the metrics/health address ("" when disabled).
func (s *Server) MetricsAddr() string {
	if s.httpLis == nil {
		return ""
	}
	return s.httpLis.Addr().String()
}

// Run starts every component and serves until ctx ends, then stops them in
// reverse order. It returns the first component error.
func (s *Server) Run(ctx context.Context) (err error) {
	cfg, logger := s.cfg, s.logger
	start := time.Now()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	meta, err := openMeta(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, meta.Close()) }()
	objects, closeObjects, err := openObjects(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeObjects()) }()
	log, err := openWAL(cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, log.Close()) }()

	clock, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.TimestampKey}, logger)
	if err != nil {
		return fmt.Errorf("app: meta store %s: %w", metaName(cfg), err)
	}
	ids, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.IDKey}, logger)
	if err != nil {
		return fmt.Errorf("app: meta store %s: %w", metaName(cfg), err)
	}
	writer := wal.NewWriter(log, clock, cfg.Writer, logger)
	root, err := rootcoord.New(ctx, cfg.RootCoord, meta, ids, clock, writer, logger)
	if err != nil {
		return err
	}
	// Query nodes pin the WAL they still have to replay; truncation behind
	// the checkpoints goes through the pins.
	pins := wal.NewPins(log)
	data, err := datacoord.New(ctx, cfg.DataCoord, meta, ids, writer, pins, root, objects, logger)
	if err != nil {
		return err
	}
	qn := querynode.New(cfg.QueryNode, log, objects, data, root, writer, pins, logger)
	defer func() { err = errors.Join(err, qn.Close()) }()
	dnCfg := cfg.DataNode
	dnCfg.PChannels = nil
	for i := 0; i < cfg.RootCoord.PChannels; i++ {
		dnCfg.PChannels = append(dnCfg.PChannels, wal.PChannelName(cfg.RootCoord.ChannelPrefix, i))
	}
	dn, err := datanode.New(dnCfg, log, objects, data, root, ids, logger)
	if err != nil {
		return err
	}
	px := proxy.New(cfg.Proxy, root, data, qn, writer, ids, clock, logger)
	rbac, err := auth.Open(ctx, meta, cfg.Security, logger)
	if err != nil {
		return err
	}
	guard := auth.NewGuard(rbac, cfg.Security.AuthorizationEnabled)
	px.SetAuth(guard)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := api.NewMetrics(reg)
	sources := []health.Source{dn, qn}
	for _, port := range []any{meta, log} {
		if p, ok := port.(health.Source); ok {
			sources = append([]health.Source{p}, sources...)
		}
	}
	s.health = sources
	registerHealthMetrics(reg, sources, map[string]func() int64{"datanode": dn.Quarantined, "querynode": qn.Quarantined})

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return writer.Run(gctx) })
	g.Go(func() error { return data.Run(gctx) })
	g.Go(func() error { return dn.Run(gctx) })
	g.Go(func() error { return dn.RunIndexBuilder(gctx, data, "standalone") })
	g.Go(func() error { return dn.RunCompactor(gctx, data) })

	// Collections that were loaded before the restart are loaded again. One
	// that fails (a damaged file, say) is reported by the query node's
	// Problems and GetLoadState; the others serve.
	for _, col := range root.AllCollections() {
		if col.Loaded {
			if err := qn.Load(ctx, col.ID, col.LoadedPartitions); err != nil {
				logger.Error("reloading a collection failed; it stays unloaded until loaded again",
					"collection", col.Name, "err", err)
			}
		}
	}

	opts := api.ServerOptions(metrics, logger)
	if guard.Enabled() {
		opts = append(opts, grpc.ChainUnaryInterceptor(guard.UnaryInterceptor()), grpc.ChainStreamInterceptor(guard.StreamInterceptor()))
	}
	srv := grpc.NewServer(opts...)
	milvuspb.RegisterMilvusServiceServer(srv, px)
	api := newAPIServer(s.grpcLis, srv, rest.New(guard.Wrap(px), logger))
	g.Go(api.serve)
	var hsrv *http.Server
	if s.httpLis != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		if cfg.Pprof {
			// Go runtime profiles (heap, goroutines, CPU) on the metrics port, only when asked for.
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			if !s.ready.Load() {
				http.Error(w, "starting", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("ok\n"))
		})
		mux.HandleFunc("/healthz/detail", s.serveHealthDetail)
		hsrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		g.Go(func() error {
			if err := hsrv.Serve(s.httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("app: http: %w", err)
			}
			return nil
		})
	}
	s.ready.Store(true)
	logger.Info("strata standalone ready", "addr", s.Addr(), "metrics", s.MetricsAddr(),
		"data_dir", cfg.DataDir, "startup", time.Since(start).String())
	g.Go(func() error {
		<-gctx.Done()
		s.ready.Store(false)
		api.shutdown(5 * time.Second)
		if hsrv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = hsrv.Shutdown(sctx)
		}
		return nil
	})
	return g.Wait()
}
