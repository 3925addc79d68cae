package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metastore/etcd"
	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/sysinfo"
	"github.com/strata-db/strata/internal/wal"
)

// The roles a process runs (Config.Role; `strata run ROLE`).
const (
	// RoleCoordinator runs the root, data and query coordinators (Milvus
	// 2.6's mixcoord), the WAL writer and a Milvus API of its own: the
	// data and query nodes and the proxies (RoleProxy) are other
	// processes.
	RoleCoordinator = "coordinator"
	// RoleQueryNode serves reads of the vchannels and segments the query
	// coordinator places on it.
	RoleQueryNode = "querynode"
	// RoleDataNode consumes the vchannels the data coordinator assigns it
	// into binlogs, and builds indexes and compacts.
	RoleDataNode = "datanode"
)

// ErrSessionLost is returned by a node process's Run when its session
// expired (etcd unreachable for a whole session TTL): its work may already
// be placed elsewhere, so it stops; restarted, it registers as a new node.
var ErrSessionLost = errors.New("app: the node's cluster session was lost")

// nodeRole reports whether role is a node role, which serves no Milvus API.
func nodeRole(role string) bool { return role == RoleQueryNode || role == RoleDataNode }

// nodeComponent is what a node process runs: its role's component, built
// over the engines and the connection to the coordinator.
type nodeComponent interface {
	// register adds the role's internal RPC services.
	register(srv *grpc.Server)
	// run runs the role's loops until ctx ends.
	run(ctx context.Context) error
	// sources are its health sources (/healthz/detail).
	sources() []health.Source
	// loading lists what it is still loading (/healthz/detail "loading").
	loading() []string
	// joined tells it the node's session, once registered (after run
	// started: the session is written last).
	joined(node membership.Node)
}

// nodeDeps is what a node role is built from.
type nodeDeps struct {
	cfg     Config
	log     wal.Log
	objects objstore.Store
	// coord reaches the elected coordinator's internal services.
	coord  grpc.ClientConnInterface
	logger *slog.Logger
}

// nodeBuilder builds a role's component; node_query.go and node_data.go
// add theirs.
type nodeBuilder func(d nodeDeps) (nodeComponent, error)

// buildNode returns role's builder.
func buildNode(role string) (nodeBuilder, error) {
	switch role {
	case RoleQueryNode:
		return newQueryNodeRole, nil
	case RoleDataNode:
		return newDataNodeRole, nil
	}
	return nil, fmt.Errorf("app: %q is not a node role", role)
}

// validateNode checks what a node process needs: the cluster's shared
// engines and an internal address for the coordinator to reach it at.
func (c Config) validateNode() error { return c.validateClustered("the coordinator reaches it there") }

// validateCoordinator checks what a coordinator process needs: the same as
// a node (the nodes reach its internal services at internalAddr).
func (c Config) validateCoordinator() error {
	return c.validateClustered("the nodes reach its services there")
}

// validateClustered checks a clustered role's engines, internal address
// and membership; why says who dials the internal address.
func (c Config) validateClustered(why string) error {
	var errs []error
	if c.Engines.Meta.Type != EngineEtcd || c.Engines.WAL.Type != EngineKafka || c.Engines.Objects.Type != EngineS3 {
		errs = append(errs, fmt.Errorf("app: a %s process shares the cluster's engines: engines.meta must be etcd, "+
			"engines.wal kafka and engines.objects s3 (now %s, %s, %s)", c.Role,
			c.Engines.Meta.Type, c.Engines.WAL.Type, c.Engines.Objects.Type))
	}
	if c.InternalAddr == "" {
		errs = append(errs, fmt.Errorf("app: a %s process needs internalAddr (--internal-addr): %s", c.Role, why))
	}
	if !c.Cluster.Enabled {
		errs = append(errs, fmt.Errorf("app: a %s process needs cluster.enabled: it is found through its session", c.Role))
	}
	return errors.Join(errs...)
}

// runNode runs a node process: it opens the engines, follows the elected
// coordinator, builds its role's component, serves its internal RPC,
// registers its session, and runs until ctx ends or the session is lost
// (then it stops with ErrSessionLost: a node whose session expired may
// already be replaced, so it must not go on as if nothing happened).
func (s *Server) runNode(ctx context.Context) (err error) {
	cfg, logger := s.cfg, s.logger
	start := time.Now()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	store, reg, err := openMembership(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	objects, log, closeData, err := openData(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeData()) }()
	coord, closeCoord, err := dialCoordinator(ctx, reg, logger)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeCoord()) }()
	build, err := buildNode(cfg.Role)
	if err != nil {
		return err
	}
	comp, err := build(nodeDeps{cfg: cfg, log: log, objects: objects, coord: coord, logger: logger})
	if err != nil {
		return err
	}
	srv, err := rpc.NewServer(cfg.RPC, logger.With("server", "internal"))
	if err != nil {
		return err
	}
	comp.register(srv)
	internal := &internalServer{lis: s.internalLis, srv: srv}

	reg2 := prometheus.NewRegistry()
	reg2.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	engines := newEngineWatch(logger, map[string]any{"meta": store, "wal": log, "objects": objects},
		func(port string) string { return engineName(cfg, port) })
	sources := append([]health.Source{engines}, comp.sources()...)
	s.health, s.loading = sources, comp.loading
	registerHealthMetrics(reg2, sources, nil)
	build2 := sysinfo.ReadBuild(cfg.Proxy.Version)
	metrics.RegisterBuildInfo(reg2, build2.Version, build2.BuildTime, build2.GitCommit)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(internal.serve)
	g.Go(func() error { return engines.run(gctx) })
	g.Go(func() error { return comp.run(gctx) })
	var hsrv *http.Server
	if s.httpLis != nil {
		hsrv = serveHTTP(g, s.httpLis, s.metricsMux(reg2))
	}
	// The session is written last: once the coordinator sees it, the
	// node's services answer.
	address := s.InternalAddr()
	if cfg.Cluster.Address != "" {
		address = cfg.Cluster.Address
	}
	member, err := reg.Register(gctx, cfg.Role, address)
	if err != nil {
		err = fmt.Errorf("app: join cluster: %w", err)
		s.stopNode(internal, hsrv)
		return errors.Join(err, g.Wait())
	}
	s.node.Store(&membershipNode{member: member})
	comp.joined(member.Node())
	g.Go(func() error {
		select {
		case <-gctx.Done():
			return nil
		case <-member.Done():
			if gctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%w: %s node %d", ErrSessionLost, cfg.Role, member.ID())
		}
	})
	s.ready.Store(true)
	logger.Info("strata "+cfg.Role+" ready", "node_id", member.ID(), "internal", s.InternalAddr(),
		"metrics", s.MetricsAddr(), "startup", time.Since(start).String())
	g.Go(func() error {
		<-gctx.Done()
		s.ready.Store(false)
		s.stopNode(internal, hsrv)
		return nil
	})
	err = g.Wait()
	// The session goes after the components stopped: the coordinator moves
	// the node's work as soon as it is gone.
	return errors.Join(err, member.Close())
}

// serveHTTP serves h on lis in g until the returned server is shut down.
func serveHTTP(g *errgroup.Group, lis net.Listener, h http.Handler) *http.Server {
	hsrv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	g.Go(func() error {
		if err := hsrv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("app: http: %w", err)
		}
		return nil
	})
	return hsrv
}

// openMembership opens the etcd meta store of a node or proxy process and
// its membership registry; the caller closes the store.
func openMembership(ctx context.Context, cfg Config, logger *slog.Logger) (*etcd.Store, *membership.Registry, error) {
	meta, err := openMeta(ctx, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	store, ok := meta.(*etcd.Store)
	if !ok {
		return nil, nil, errors.Join(fmt.Errorf("app: a %s process needs the etcd meta store, not %T", cfg.Role, meta), meta.Close())
	}
	reg, err := membership.New(store.Client(), cfg.Cluster.Membership, logger)
	if err != nil {
		return nil, nil, errors.Join(err, store.Close())
	}
	return store, reg, nil
}

// stopNode stops a node's servers.
func (s *Server) stopNode(internal *internalServer, hsrv *http.Server) {
	internal.shutdown(5 * time.Second)
	if hsrv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hsrv.Shutdown(sctx)
	}
}

// membershipNode is a node process's session, for /healthz/detail.
type membershipNode struct {
	member *membership.Member
}

// listenNode binds a node process's ports: the internal RPC and the
// metrics port (no API).
func (s *Server) listenNode() error {
	var err error
	if s.internalLis, err = net.Listen("tcp", s.cfg.InternalAddr); err != nil {
		return fmt.Errorf("app: listen %s: %w", s.cfg.InternalAddr, err)
	}
	if s.cfg.MetricsAddr != "" {
		if s.httpLis, err = net.Listen("tcp", s.cfg.MetricsAddr); err != nil {
			_ = s.internalLis.Close()
			return fmt.Errorf("app: listen %s: %w", s.cfg.MetricsAddr, err)
		}
	}
	return nil
}
