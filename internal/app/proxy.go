package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/api"
	"github.com/strata-db/strata/internal/auth"
	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querycoord"
	"github.com/strata-db/strata/internal/quota"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	"github.com/strata-db/strata/internal/rpc/proxyrpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
	"github.com/strata-db/strata/internal/sysinfo"
)

// RoleProxy serves the Milvus API apart from the coordinator: stateless,
// any number of them, each reaching the elected coordinator over internal
// RPC (strata.proxy.v1, strata.coord.v1 ClockService, the coordinator's
// QueryNodeService) and registered as a "proxy" session so that the
// coordinator can tell it to drop its metadata cache after a DDL.
const RoleProxy = "proxy"

// proxyIDBlock is how many IDs a proxy fetches from the coordinator at a
// time (row IDs and auto-ID keys).
const proxyIDBlock = 10000

// validateProxy checks what a proxy process needs: the etcd meta store
// (membership: its session and the coordinator's election), an internal
// address for the coordinator's cache invalidations and cluster.enabled.
// It reads nothing else from the engines but the users, roles and grants,
// which it reloads when the coordinator says they changed.
func (c Config) validateProxy() error {
	var errs []error
	if c.Engines.Meta.Type != EngineEtcd {
		errs = append(errs, fmt.Errorf("app: a proxy process finds the coordinator through etcd: engines.meta must be etcd (now %s)", c.Engines.Meta.Type))
	}
	if c.InternalAddr == "" {
		errs = append(errs, errors.New("app: a proxy process needs internalAddr (--internal-addr): the coordinator tells it there to drop its metadata cache"))
	}
	if !c.Cluster.Enabled {
		errs = append(errs, errors.New("app: a proxy process needs cluster.enabled: the coordinator finds it through its session"))
	}
	return errors.Join(errs...)
}

// runProxy runs a proxy process: it follows the elected coordinator,
// builds the proxy over the coordinator's clients, serves the Milvus API,
// the metrics port and ProxyService, registers its session, and runs until
// ctx ends or the session is lost (then it stops with ErrSessionLost: the
// coordinator no longer tells it about DDL, so its cache could go stale).
func (s *Server) runProxy(ctx context.Context) (err error) {
	cfg, logger := s.cfg, s.logger
	start := time.Now()
	store, reg, err := openMembership(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	meta := metastore.KV(store)
	coord, closeCoord, err := dialCoordinator(ctx, reg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeCoord()) }()

	cat := proxyrpc.NewCatalog(coord, logger.With("client", "catalog"))
	data := proxyrpc.NewData(coord, logger.With("client", "datacoord"))
	query, err := queryrpc.NewClient("coordinator", coord, queryrpc.Defaults(), logger.With("client", "querycoord"))
	if err != nil {
		return err
	}
	clock := coordrpc.NewClock(coord)
	ids := proxyrpc.NewIDs(clock.Allocate, proxyIDBlock)
	tss := proxyrpc.NewTimestamps(clock.AllocateTimestamps)
	// Reads go straight to the shard leaders the query coordinator names
	// (querycoord.Router); loads and releases go to the coordinator.
	pool, err := rpc.NewPool(rpc.ClientDefaults(), logger.With("client", "querynodes"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, pool.Close()) }()
	router, err := querycoord.NewRouter(querycoord.RouterDefaults(), coordrpc.NewQueryCoord(coord),
		func(_ int64, addr string) (querycoord.Reader, error) {
			conn, err := pool.Conn(addr)
			if err != nil {
				return nil, err
			}
			return queryrpc.NewClient(addr, conn, queryrpc.Defaults(), logger.With("client", "querynode"))
		}, logger.With("component", "router"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, router.Close()) }()
	px := proxy.New(cfg.Proxy, proxy.CatalogOf(cat), proxy.DataCoordOf(data), proxy.QueryNode{Loader: query, Reader: router},
		proxyrpc.NewDMLClient(coord), ids, tss, logger)
	reg2 := prometheus.NewRegistry()
	quotas, err := quota.New(cfg.Quota, metrics.NewRateLimit(reg2))
	if err != nil {
		return err
	}
	px.SetQuotas(quotas)
	px.SetImporter(proxyrpc.NewImportClient(coord, logger.With("client", "import")))
	px.SetResourceGroups(proxyrpc.NewResourceGroupClient(coord))
	// Users, roles and grants: read from the meta store, reloaded when the
	// coordinator tells the proxies something changed; a change through
	// this proxy is checked here and made by the coordinator, which owns
	// them (RBACService) and tells every proxy to reload before it returns.
	rbac, err := auth.Open(ctx, readOnlyKV{KV: meta}, cfg.Security, logger)
	if err != nil {
		return err
	}
	guard := auth.NewGuard(rbac, cfg.Security.AuthorizationEnabled)
	guard.SetAliases(func(db, alias string) (string, bool) {
		name, err := cat.DescribeAlias(db, alias)
		return name, err == nil
	})
	px.SetAuth(guard)
	px.SetRBACWriter(proxyrpc.NewRBAC(coord))

	reg2.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	apiMetrics := api.NewMetrics(reg2)
	engines := newEngineWatch(logger, map[string]any{"meta": store}, func(port string) string { return engineName(cfg, port) })
	sources := []health.Source{engines, coordinatorSource(coord)}
	s.health, s.loading = sources, func() []string { return []string{} }
	registerHealthMetrics(reg2, sources, nil)
	build := sysinfo.ReadBuild(cfg.Proxy.Version)
	metrics.RegisterBuildInfo(reg2, build.Version, build.BuildTime, build.GitCommit)
	svc := service{Proxy: px, info: sysinfo.New(sysinfo.Config{Build: build, Started: start, DataDir: cfg.DataDir}, sources...)}

	caches := proxyCaches{cat: cat, rbac: rbac, logger: logger}
	internal, err := newInternalServer(s.internalLis, cfg.RPC, logger, func(srv *grpc.Server) {
		proxyv1.RegisterProxyServiceServer(srv, proxyrpc.NewProxyServer(caches, logger))
	})
	if err != nil {
		return err
	}
	apiSrv, _ := newMilvusAPI(s.grpcLis, apiMetrics, cfg.Proxy.SlowQuerySpan, guard, svc, logger)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(internal.serve)
	g.Go(apiSrv.serve)
	g.Go(func() error { return engines.run(gctx) })
	var hsrv *http.Server
	if s.httpLis != nil {
		hsrv = serveHTTP(g, s.httpLis, s.metricsMux(reg2))
	}
	stop := func() {
		s.ready.Store(false)
		apiSrv.shutdown(5 * time.Second)
		s.stopNode(internal, hsrv)
	}
	// The session is written once ProxyService answers: from then on the
	// coordinator tells this proxy about every DDL.
	address := s.InternalAddr()
	if cfg.Cluster.Address != "" {
		address = cfg.Cluster.Address
	}
	apiAddr := s.Addr()
	if cfg.Cluster.APIAddress != "" {
		apiAddr = cfg.Cluster.APIAddress
	}
	member, err := reg.Register(gctx, RoleProxy, address, membership.WithAPI(apiAddr))
	if err != nil {
		err = fmt.Errorf("app: join cluster: %w", err)
		stop()
		return errors.Join(err, g.Wait())
	}
	// DDL and RBAC changes made before the session existed were not
	// announced here: start from an empty cache and reload RBAC.
	caches.Invalidate()
	s.node.Store(&membershipNode{member: member})
	g.Go(func() error {
		select {
		case <-gctx.Done():
			return nil
		case <-member.Done():
			cat.Invalidate()
			if gctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%w: proxy %d", ErrSessionLost, member.ID())
		}
	})
	s.ready.Store(true)
	logger.Info("strata proxy ready", "node_id", member.ID(), "addr", s.Addr(), "internal", s.InternalAddr(),
		"metrics", s.MetricsAddr(), "startup", time.Since(start).String())
	g.Go(func() error {
		<-gctx.Done()
		stop()
		return nil
	})
	err = g.Wait()
	return errors.Join(err, member.Close())
}

// proxyCaches is what a proxy process drops or reloads when the
// coordinator says the catalog or RBAC changed: the metadata cache, and
// the users, roles and grants.
type proxyCaches struct {
	cat    *proxyrpc.Catalog
	rbac   *auth.Store
	logger *slog.Logger
}

// Invalidate implements proxyrpc.Invalidator.
func (c proxyCaches) Invalidate() {
	c.cat.Invalidate()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.rbac.Reload(ctx); err != nil {
		c.logger.Warn("reloading users, roles and grants failed", "err", err)
	}
}

// errRBACOnCoordinator refuses a write of a proxy's own RBAC store: the
// proxy sends its changes to the coordinator (proxy.SetRBACWriter).
var errRBACOnCoordinator = errors.New("app: users, roles and grants are written by the coordinator, not a proxy's store")

// readOnlyKV is the meta store as a proxy's RBAC store sees it: reads
// pass, writes are refused (the coordinator makes them and tells the
// proxies to reload).
type readOnlyKV struct{ metastore.KV }

// Txn implements metastore.KV: refused.
func (readOnlyKV) Txn(context.Context, ...metastore.Op) error { return errRBACOnCoordinator }

// notifyingKV is the meta store as the coordinator's RBAC store writes
// it: after each write that succeeded, every proxy process is told to
// reload (before the RBAC call returns).
type notifyingKV struct {
	metastore.KV
	notify func(ctx context.Context, db, coll, ddl string)
}

// Txn implements metastore.KV.
func (k notifyingKV) Txn(ctx context.Context, ops ...metastore.Op) error {
	if err := k.KV.Txn(ctx, ops...); err != nil {
		return err
	}
	k.notify(ctx, "", "", "RBAC")
	return nil
}

// coordinatorSource reports a problem while no coordinator leads (the
// proxy's calls then fail with code 2, retriable): /healthz/detail says
// "degraded".
func coordinatorSource(c *leaderConn) health.Source {
	var (
		mu    sync.Mutex
		since time.Time
	)
	return health.SourceFunc(func() []health.Problem {
		mu.Lock()
		defer mu.Unlock()
		if t := c.Leader(); t != nil && t.Revision != 0 {
			since = time.Time{}
			return nil
		}
		if since.IsZero() {
			since = time.Now()
		}
		return []health.Problem{{
			Component: "coordinator", Subject: "election " + ElectionCoordinator,
			Reason: "no coordinator is elected: reads, writes and DDL fail until one leads", Since: since,
			WritesUnavailable: true,
		}}
	})
}

// proxyNotifier tells every live proxy process to drop its metadata cache
// (the coordinator's side of the invalidation): the proxies are the
// "proxy" sessions, reached at their internal address through pool.
func proxyNotifier(reg *membership.Registry, pool *rpc.Pool, logger *slog.Logger) *proxyrpc.Notifier {
	list := func(ctx context.Context) ([]string, error) {
		nodes, err := reg.List(ctx, membership.RoleProxy)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(nodes))
		for i, n := range nodes {
			out[i] = n.Address
		}
		return out, nil
	}
	dial := func(addr string) (grpc.ClientConnInterface, error) { return pool.Conn(addr) }
	return proxyrpc.NewNotifier(proxyrpc.NotifierConfig{Bound: 3 * time.Second}, list, dial, logger.With("component", "invalidate"))
}
