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
//
// Start order: the meta store, object storage and WAL open, the components
// are built and started, the collections that were loaded before are
// registered as loading (querynode LoadAll), then the API and /healthz
// serve. Nothing waits for a sealed segment: the reloads go on in the
// background (GetLoadState Loading, /healthz/detail "loading"), so a server
// restarted after kill -9 answers within the time to open its stores.
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
	"path/filepath"
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
	"github.com/strata-db/strata/internal/console"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/importer"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querycoord"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/quota"
	"github.com/strata-db/strata/internal/rest"
	"github.com/strata-db/strata/internal/rgroup"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/proxyrpc"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/sysinfo"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

// Config is the standalone server's configuration. It is also the
// document `strata standalone --config FILE` reads (internal/config): each
// field's json tag is its key there, and a field tagged "-" is set by the
// app, not by the document.
type Config struct {
	// Role is what the process runs (`strata run ROLE`): RoleStandalone
	// (every role; "" means it too), RoleCoordinator, RoleProxy,
	// RoleQueryNode or RoleDataNode (docs/design/cluster.md).
	Role string `json:"-"`
	// DataDir holds the meta store, the WAL and the object storage of the
	// embedded engines.
	DataDir string `json:"dataDir"`
	// Addr is the listen address of the Milvus API (gRPC and REST v2).
	Addr string `json:"addr"`
	// MetricsAddr is the address of /metrics, /healthz and /debug/pprof/
	// ("" disables them).
	MetricsAddr string `json:"metricsAddr"`
	// InternalAddr is the listen address of Strata's internal RPC services
	// (docs/design/rpc.md: the query node's QueryNodeService), for proxies
	// in other processes ("" = not served, the default). Plaintext and
	// unauthenticated: bind it to a private network.
	InternalAddr string `json:"internalAddr"`
	// RPC configures the internal RPC server.
	RPC rpc.ServerConfig `json:"rpc"`
	// RootPath is the object-storage root every data file lives under; the
	// data coordinator (garbage collection), the data nodes (writes) and the
	// query nodes (reads) all get this one. Fixed once data exists.
	RootPath string `json:"rootPath"`
	// RootCoord configures the root coordinator (pchannels, DDL limits).
	RootCoord rootcoord.Config `json:"rootCoord"`
	// DataCoord configures the data coordinator (seal, compaction, GC);
	// its RootPath is RootPath.
	DataCoord datacoord.Config `json:"dataCoord"`
	// DataNode configures the data node (write buffers, syncs); its
	// RootPath is RootPath and it consumes every pchannel.
	DataNode datanode.Config `json:"dataNode"`
	// QueryNode configures the query node; its RootPath is RootPath, and
	// its mmap directory {DataDir}/cache/mmap unless set.
	QueryNode querynode.Config `json:"queryNode"`
	// QueryCoord configures the query coordinator of cluster mode
	// (healInterval; spreadSegments spreads sealed segments over each
	// replica's query nodes).
	QueryCoord querycoord.Config `json:"queryCoord"`
	// Proxy configures the Milvus API front end.
	Proxy proxy.Config `json:"proxy"`
	// Writer configures the WAL writer (time ticks).
	Writer wal.WriterConfig `json:"walWriter"`
	// WAL configures the local WAL (Engines.WAL.Type "local"); its Dir is
	// {DataDir}/wal.
	WAL wallocal.Config `json:"wal"`
	// Engines selects the meta store, object store and WAL implementations.
	Engines Engines `json:"engines"`
	// Cluster configures membership, which runs when the meta store is
	// etcd: a session, the coordinator election and fenced meta writes.
	Cluster Cluster `json:"cluster"`
	// Import configures bulk import (README "Bulk import").
	Import importer.Config `json:"import"`
	// Security is authentication, RBAC and TLS (off by default, as Milvus).
	Security auth.Config `json:"security"`
	// Quota is Milvus's quotaAndLimits: DML/DQL rate limits, forced
	// denial and memory-based write protection (internal/quota).
	Quota quota.Config `json:"quota"`
	// Pprof serves Go's /debug/pprof/ profiles on the metrics port. Off by
	// default: profiles expose command lines and memory contents.
	Pprof bool `json:"pprof"`
	// Console serves the web console at /console on the metrics port (on by
	// default; with authorization on it asks for a user's credentials and
	// shows what that user may read).
	Console bool `json:"console"`
	// LogLevel is the level of the server's logger, which GET and PUT
	// /log/level on the metrics port read and change at run time (nil: no
	// such endpoint).
	LogLevel *slog.LevelVar `json:"-"`
}

// Defaults returns the default standalone configuration.
func Defaults() Config {
	return Config{
		DataDir: "./strata-data", Addr: ":19530", MetricsAddr: ":9091", RootPath: storage.DefaultRootPath,
		RootCoord: rootcoord.Defaults(), DataCoord: datacoord.Defaults(), DataNode: datanode.Defaults(),
		QueryNode: querynode.Defaults(), QueryCoord: querycoord.Defaults(), Proxy: proxy.Defaults(),
		Writer: wal.WriterDefaults(), WAL: wallocal.Defaults(),
		Engines: defaultEngines(), Cluster: defaultCluster(), Security: auth.Defaults(), Quota: quota.Defaults(), Console: true,
		Import: importer.Defaults(), RPC: rpc.ServerDefaults(),
	}
}

// Validate checks the configuration: its own fields and every component's
// configuration as the app passes it on.
func (c Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("app: data dir is required"))
	}
	if c.RootPath == "" || objstore.ValidateKey(c.RootPath) != nil {
		// Each component would say the same of its copy.
		return errors.Join(append(errs, fmt.Errorf("app: rootPath %q is not a valid object key", c.RootPath))...)
	}
	errs = append(errs, c.RootCoord.Validate(), c.dataCoord().Validate(), c.dataNode().Validate(),
		c.queryNode().Validate(), c.QueryCoord.Validate(), c.Proxy.Validate(), c.Writer.Validate(), c.Engines.Validate(), c.Cluster.Validate(), c.Security.Validate(), c.Quota.Validate(),
		c.importConfig().Validate(), c.RPC.Validate())
	if c.Engines.WAL.Type != EngineKafka {
		errs = append(errs, c.localWAL().Validate())
	}
	switch {
	case nodeRole(c.Role):
		errs = append(errs, c.validateNode())
	case c.Role == RoleCoordinator:
		errs = append(errs, c.validateCoordinator())
	case c.Role == RoleProxy:
		errs = append(errs, c.validateProxy())
	case c.Role != RoleStandalone && c.Role != "":
		errs = append(errs, fmt.Errorf("app: unknown role %q: standalone, %s, %s, %s or %s", c.Role, RoleCoordinator, RoleProxy, RoleQueryNode, RoleDataNode))
	}
	return errors.Join(errs...)
}

// role is the process's role (Role, RoleStandalone when unset).
func (c Config) role() string {
	if c.Role == "" {
		return RoleStandalone
	}
	return c.Role
}

// dataCoord is the data coordinator's configuration.
func (c Config) dataCoord() datacoord.Config {
	dc := c.DataCoord
	dc.RootPath = c.RootPath
	return dc
}

// dataNode is the data node's configuration: it consumes every pchannel.
func (c Config) dataNode() datanode.Config {
	dn := c.DataNode
	dn.RootPath = c.RootPath
	dn.PChannels = nil
	for i := 0; i < c.RootCoord.PChannels; i++ {
		dn.PChannels = append(dn.PChannels, wal.PChannelName(c.RootCoord.ChannelPrefix, i))
	}
	return dn
}

// queryNode is the query node's configuration.
func (c Config) queryNode() querynode.Config {
	qn := c.QueryNode
	qn.RootPath = c.RootPath
	if qn.Mmap.Dir == "" {
		qn.Mmap.Dir = filepath.Join(c.DataDir, "cache", "mmap")
	}
	return qn
}

// localWAL is the local WAL's configuration.
func (c Config) localWAL() wallocal.Config {
	w := c.WAL
	w.Dir = filepath.Join(c.DataDir, "wal")
	return w
}

// Server is a running standalone server.
type Server struct {
	cfg    Config
	logger *slog.Logger
	ready  atomic.Bool
	health []health.Source // set by Run before ready
	// loading lists the collections still loading (set by Run before ready).
	loading func() []string
	// cluster is the process's membership (nil without one; set by Run
	// once registered).
	cluster  atomic.Pointer[clusterNode]
	reloaded chan struct{} // closed once the restart's reloads have ended
	grpcLis  net.Listener
	httpLis  net.Listener
	// internalLis is InternalAddr's listener (nil when not served).
	internalLis net.Listener
	// node is a node process's session (nil before it registers, and in
	// other roles).
	node atomic.Pointer[membershipNode]
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
	s := &Server{cfg: cfg, logger: logger, reloaded: make(chan struct{})}
	if nodeRole(cfg.Role) {
		return s, s.listenNode()
	}
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
	if cfg.InternalAddr != "" {
		if s.internalLis, err = net.Listen("tcp", cfg.InternalAddr); err != nil {
			_ = s.grpcLis.Close()
			if s.httpLis != nil {
				_ = s.httpLis.Close()
			}
			return nil, fmt.Errorf("app: listen %s: %w", cfg.InternalAddr, err)
		}
	}
	return s, nil
}

// InternalAddr is the internal RPC address ("" when not served).
func (s *Server) InternalAddr() string {
	if s.internalLis == nil {
		return ""
	}
	return s.internalLis.Addr().String()
}

// Ready reports whether the server is serving (what /healthz answers).
func (s *Server) Ready() bool { return s.ready.Load() }

// Reloaded is closed once the collections that were loaded before the
// server started have loaded again (or failed to, or Run stopped): until
// then they answer GetLoadState Loading. It stays open if Run fails before.
func (s *Server) Reloaded() <-chan struct{} { return s.reloaded }

// Addr is the API address: gRPC and REST v2 share it ("" for a node
// role, which serves no API).
func (s *Server) Addr() string {
	if s.grpcLis == nil {
		return ""
	}
	return s.grpcLis.Addr().String()
}

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
	if nodeRole(s.cfg.Role) {
		return s.runNode(ctx)
	}
	if s.cfg.Role == RoleProxy {
		return s.runProxy(ctx)
	}
	cfg, logger := s.cfg, s.logger
	start := time.Now()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	meta, err := openMeta(ctx, cfg, logger)
	if err != nil {
		return err
	}
	store := meta // the engine; meta becomes its fenced view when clustered
	defer func() { err = errors.Join(err, store.Close()) }()
	var (
		member *clusterNode
		front  *switchHandler // the metrics port's handler, served early when clustered
		hsrv   *http.Server
		apiLis = s.grpcLis // the API's listener: a relay view when clustered
	)
	if cfg.clusterOn() {
		if member, err = joinCluster(ctx, cfg, meta, cfg.role(), s.InternalAddr(), s.Addr(), logger); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, member.close()) }()
		s.cluster.Store(member)
		if s.httpLis != nil {
			// A standby answers /healthz (503 "standby") while it waits.
			front = &switchHandler{first: http.HandlerFunc(s.serveStandby)}
			hsrv = &http.Server{Handler: front, ReadHeaderTimeout: 5 * time.Second}
			served := make(chan struct{})
			go func() {
				defer close(served)
				if err := hsrv.Serve(s.httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
					logger.Error("metrics port stopped serving", "err", err)
				}
			}()
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = hsrv.Shutdown(sctx)
				<-served
			}()
		}
		// A standby's API port answers at once that it is not ready
		// instead of leaving clients to wait; the real API takes the port
		// over when this process leads.
		relay := newRelayListener(s.grpcLis)
		defer func() { _ = relay.Close() }()
		standby := standbyAPI(relay.view(), s.standbyReason)
		standbyDone := make(chan struct{})
		go func() {
			defer close(standbyDone)
			_ = standby.serve()
		}()
		// Every component writes through the meta store fenced by the
		// term this process leads.
		meta, err = member.campaign(ctx)
		standby.shutdown(time.Second)
		<-standbyDone
		if err != nil {
			if ctx.Err() != nil {
				return nil // a standby asked to stop: a clean stop
			}
			return err
		}
		apiLis = relay.view()
	}
	objects, log, closeData, err := openData(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeData()) }()

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
	coordinator := cfg.role() == RoleCoordinator
	// Query nodes pin the WAL they still have to replay; truncation behind
	// the checkpoints goes through the pins. In the coordinator role the
	// query nodes run in other processes and report their pins
	// (wal.RemotePins, coordinator.go).
	pins := wal.NewPins(log)
	var trunc datacoord.Truncater = pins
	var remotePins *wal.RemotePins
	if coordinator {
		remotePins = wal.NewRemotePins(pins, pinGrace)
		trunc = remotePins
	}
	data, err := datacoord.New(ctx, cfg.dataCoord(), meta, ids, writer, trunc, root, objects, logger)
	if err != nil {
		return err
	}
	groups, err := rgroup.Open(ctx, meta)
	if err != nil {
		return err
	}
	var (
		qs   *querySide
		pool *rpc.Pool // the coordinator role's connections to the nodes
	)
	if coordinator {
		if pool, err = rpc.NewPool(rpc.ClientDefaults(), logger.With("client", "nodes")); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, pool.Close()) }()
		if qs, err = remoteQuerySide(cfg.QueryCoord, root, placement.NewStore(meta), groups, member.reg, pool, logger); err != nil {
			return err
		}
	} else {
		lg, err := newLocalGroups(ctx, groups, placement.NewStore(meta), root, cfg.Addr)
		if err != nil {
			return err
		}
		qs = localQuerySide(querynode.New(cfg.queryNode(), log, objects, data, root, writer, pins, logger), lg)
	}
	reg := prometheus.NewRegistry()
	om := newObservers(reg, root, data, qs.view, log, logger)
	// In the coordinator role the data node consumes nothing (the data
	// node processes do): it writes the segments of bulk imports only.
	dn, err := datanode.New(cfg.dataNode(), log, om.dnObjects(objects), om.dnCoord(data), root, ids, logger)
	if err != nil {
		return err
	}
	// In the coordinator role every DDL tells the proxy processes to drop
	// their metadata caches before it returns.
	var (
		catalogRoot proxy.RootCoord = root
		rbacKV      metastore.KV    = meta
	)
	if coordinator {
		notifier := proxyNotifier(member.reg, pool, logger)
		catalogRoot = proxyrpc.Notifying(root, notifier.Invalidate)
		rbacKV = notifyingKV{KV: meta, notify: notifier.Invalidate} // RBAC changes: the proxies reload
	}
	px := proxy.New(cfg.Proxy, proxy.CatalogOf(catalogRoot), proxy.DataCoordOf(data), proxy.QueryNodeOf(om.queryNode(qs.server)), proxy.NewLocalDML(writer, data), ids, clock, logger)
	rbac, err := auth.Open(ctx, rbacKV, cfg.Security, logger)
	if err != nil {
		return err
	}
	guard := auth.NewGuard(rbac, cfg.Security.AuthorizationEnabled)
	guard.SetAliases(root.AliasTarget)
	px.SetAuth(guard)
	quotas, err := quota.New(cfg.Quota, metrics.NewRateLimit(reg))
	if err != nil {
		return err
	}
	px.SetQuotas(quotas)
	px.SetResourceGroups(qs.groups)
	imp, err := newImporter(ctx, cfg, meta, ids, clock, objects, px, qs.server, dn, data, root, logger)
	if err != nil {
		return err
	}
	px.SetImporter(imp)

	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	apiMetrics := api.NewMetrics(reg)
	engines := newEngineWatch(logger, map[string]any{"meta": store, "wal": log, "objects": objects},
		func(port string) string { return engineName(cfg, port) })
	sources := append([]health.Source{engines, dn}, qs.sources...)
	for _, port := range []any{store, log} {
		if p, ok := port.(health.Source); ok {
			sources = append([]health.Source{p}, sources...)
		}
	}
	s.health = sources
	quarantined := map[string]func() int64{"datanode": dn.Quarantined}
	if qs.quarantined != nil {
		quarantined["querynode"] = qs.quarantined
	}
	registerHealthMetrics(reg, sources, quarantined)
	build := sysinfo.ReadBuild(cfg.Proxy.Version)
	metrics.RegisterBuildInfo(reg, build.Version, build.BuildTime, build.GitCommit)
	svc := service{Proxy: px, info: sysinfo.New(sysinfo.Config{
		Build: build, Started: start, DataDir: cfg.DataDir,
		SegmentMaxSizeMB: float64(cfg.DataCoord.SegmentMaxSize) / (1 << 20),
	}, sources...)}

	var internal *internalServer
	if s.internalLis != nil {
		register := func(srv *grpc.Server) { qs.register(srv, om.queryNode(qs.server)) }
		if coordinator {
			// What the node processes ask of the coordinators.
			register = func(srv *grpc.Server) {
				registerCoordServices(srv, data, root, ids, clock, writer, remotePins, om, qs.leaders)
				registerProxyServices(srv, proxyServices{
					root: catalogRoot, core: root, data: data, writer: writer, imp: imp, query: om.queryNode(qs.server),
					rbac: rbac, groups: qs.groups,
				})
			}
		}
		if internal, err = newInternalServer(s.internalLis, cfg.RPC, logger, register); err != nil {
			return err
		}
	}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return writer.Run(gctx) })
	g.Go(func() error { return engines.run(gctx) })
	g.Go(func() error { return data.Run(gctx) })
	if coordinator {
		bal, err := newChannelBalancer(meta, data, root, pool, logger)
		if err != nil {
			return err
		}
		g.Go(func() error {
			w, err := member.reg.Watch(gctx, membership.RoleDataNode)
			if err != nil {
				return err
			}
			return bal.Run(gctx, w)
		})
		// The WAL pins of a query node count while its session lives.
		g.Go(func() error { return followQueryNodes(gctx, member.reg, remotePins) })
		// The index builds and compactions of a data node that dies
		// move at once (docs/design/cluster.md, "What happens on each
		// failure").
		released := metrics.NewTaskRelease(reg)
		g.Go(func() error {
			return releaseDeadExecutors(gctx, member.reg, data, released, logger.With("component", "claims"))
		})
	} else {
		g.Go(func() error { return dn.Run(gctx) })
		g.Go(func() error {
			// Claims of other builders (data node processes, when this
			// meta store served a cluster before) have nobody to finish them.
			for _, name := range data.Claimants() {
				if name != standaloneExecutor {
					release(gctx, data, name, 0, nil, logger)
				}
			}
			return dn.RunIndexBuilder(gctx, om.indexBuilds(data), standaloneExecutor)
		})
		g.Go(func() error { return dn.RunCompactor(gctx, om.compactions(data), standaloneExecutor) })
	}
	g.Go(func() error { return qs.run(gctx) })
	g.Go(func() error { return imp.Run(gctx) })
	if member != nil {
		g.Go(func() error { return member.watch(gctx) })
	}

	// Collections that were loaded before the restart are loaded again in
	// the background: the API serves as soon as the meta store and the WAL
	// are open, and a collection answers GetLoadState Loading (reads: 101)
	// until every sealed segment is attached and its WAL replayed.
	// Each is registered as loading before the API serves, so no client
	// sees it NotLoad in between.
	s.loading = qs.loading
	var reloads []querynode.LoadRequest
	cols, err := root.AllCollections(ctx)
	if err != nil {
		return err
	}
	for _, col := range cols {
		if col.Loaded {
			reloads = append(reloads, querynode.LoadRequest{CollectionID: col.ID, Partitions: col.LoadedPartitions})
		}
	}
	reloaded := qs.reload(gctx, reloads)
	if len(reloads) > 0 {
		logger.Info("reloading collections", "count", len(reloads))
	}
	go func() {
		<-reloaded
		if len(reloads) > 0 {
			logger.Info("collections reloaded", "count", len(reloads), "since_start", time.Since(start).String())
		}
		close(s.reloaded)
	}()

	api, restHandler := newMilvusAPI(apiLis, apiMetrics, cfg.Proxy.SlowQuerySpan, guard, svc, logger)
	g.Go(api.serve)
	if internal != nil {
		g.Go(internal.serve)
	}
	if s.httpLis != nil {
		mux := s.metricsMux(reg)
		if cfg.Console {
			con := console.New(guard.Wrap(svc), console.Options{Gatherer: reg, REST: restHandler, Started: start})
			mux.Handle("/console", con)
			mux.Handle("/console/", con)
			g.Go(func() error { return con.Run(gctx) })
		}
		if front != nil {
			var h http.Handler = mux
			front.next.Store(&h) // already serving since before the election
		} else {
			hsrv = serveHTTP(g, s.httpLis, mux)
		}
	}
	s.ready.Store(true)
	logger.Info("strata "+cfg.role()+" ready", "addr", s.Addr(), "metrics", s.MetricsAddr(), "internal", s.InternalAddr(),
		"data_dir", cfg.DataDir, "startup", time.Since(start).String())
	g.Go(func() error {
		<-gctx.Done()
		s.ready.Store(false)
		api.shutdown(5 * time.Second)
		if internal != nil {
			internal.shutdown(5 * time.Second)
		}
		if hsrv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = hsrv.Shutdown(sctx)
		}
		return nil
	})
	return g.Wait()
}

// newMilvusAPI is the Milvus API over svc on lis: gRPC with the
// observer's metrics and the guard's interceptors (when authorization is
// on), and REST v2 (with bulk import) on the same port. It returns the
// server and the REST handler (the console serves it too).
func newMilvusAPI(lis net.Listener, m *api.Metrics, slow time.Duration, guard *auth.Guard, svc service,
	logger *slog.Logger,
) (*apiServer, http.Handler) {
	obs := api.NewObserver(m, logger, slow)
	opts := api.ServerOptions(obs)
	if guard.Enabled() {
		opts = append(opts, grpc.ChainUnaryInterceptor(guard.UnaryInterceptor()), grpc.ChainStreamInterceptor(guard.StreamInterceptor()))
	}
	srv := grpc.NewServer(opts...)
	milvuspb.RegisterMilvusServiceServer(srv, svc)
	restAPI := rest.New(guard.Wrap(svc), logger)
	restAPI.SetImports(svc.Proxy, importAuthorizer(guard))
	restHandler := obs.RESTHandler(restAPI)
	return newAPIServer(lis, srv, restHandler), restHandler
}

// metricsMux serves the metrics port's common endpoints: /metrics from
// reg, Go's profiles when Config.Pprof, /healthz, /healthz/detail and
// /log/level.
func (s *Server) metricsMux(reg prometheus.Gatherer) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if s.cfg.Pprof {
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
	if s.cfg.LogLevel != nil {
		mux.HandleFunc("/log/level", logLevelHandler(s.cfg.LogLevel, s.logger))
	}
	return mux
}
