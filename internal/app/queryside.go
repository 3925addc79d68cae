package app

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querycoord"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rgroup"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
)

// querySide is the query side as the rest of a process uses it: the
// in-process query node (standalone), or the query coordinator placing
// collections on query-node processes (the coordinator role).
type querySide struct {
	// server is what the proxy reads through (unmetered).
	server proxy.QueryServer
	// view is what the state metrics read.
	view metrics.QueryView
	// sources are the health sources; quarantined counts WAL messages
	// skipped (nil: none kept here).
	sources     []health.Source
	quarantined func() int64
	// loading lists the collections still loading, by name.
	loading func() []string
	// run runs the side's loops until ctx ends.
	run func(ctx context.Context) error
	// reload loads again the collections loaded before a restart, in the
	// background; the channel closes when every load ended.
	reload func(ctx context.Context, reqs []querynode.LoadRequest) <-chan struct{}
	// register adds the side's internal RPC services (nil: none).
	register func(srv *grpc.Server, metered proxy.QueryServer)
	// groups keeps the resource groups.
	groups proxy.ResourceGroups
	// leaders is the query coordinator's shard leaders, which proxy
	// processes read (nil: the standalone's query node, no coordinator).
	leaders coordrpc.ShardLeaders
}

// localQuerySide is the standalone's in-process query node, in the
// resource groups of groups.
func localQuerySide(qn *querynode.Node, groups *localGroups) *querySide {
	return &querySide{
		server: groups.server(qn), groups: groups, view: qn, sources: []health.Source{qn}, quarantined: qn.Quarantined,
		loading: qn.LoadingCollections, run: qn.Run,
		reload: func(ctx context.Context, reqs []querynode.LoadRequest) <-chan struct{} {
			return qn.LoadAll(ctx, reqs, max(runtime.GOMAXPROCS(0), 2))
		},
		register: func(srv *grpc.Server, metered proxy.QueryServer) {
			served := servedQueryNode{QueryServer: metered, node: qn}
			querynodev1.RegisterQueryNodeServiceServer(srv, queryrpc.NewServer(served, served))
		},
	}
}

// remoteQuerySide is the coordinator role's query coordinator (cfg) over the
// query-node processes of the cluster, in the resource groups of groups:
// it follows the querynode role's sessions and reaches each node's
// QueryNodeService through pool.
func remoteQuerySide(cfg querycoord.Config, root *rootcoord.Core, store *placement.Store, groups *rgroup.Manager, reg *membership.Registry,
	pool *rpc.Pool, logger *slog.Logger,
) (*querySide, error) {
	dial := func(n membership.Node) (querycoord.Node, error) {
		conn, err := pool.Conn(n.Address)
		if err != nil {
			return nil, err
		}
		return queryrpc.NewClient(n.Address, conn, queryrpc.Defaults(), logger)
	}
	qc, err := querycoord.New(cfg, root, store, groups, dial, logger.With("component", "querycoord"))
	if err != nil {
		return nil, err
	}
	loading := func() []string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		cols, err := root.AllCollections(ctx)
		if err != nil {
			return []string{}
		}
		out := []string{}
		for _, col := range cols {
			if loading, err := qc.Loading(ctx, col.ID); err == nil && loading {
				out = append(out, col.Name)
			}
		}
		return out
	}
	return &querySide{
		server: qc, groups: qc, view: coordView{qc}, loading: loading, leaders: qc,
		run: func(ctx context.Context) error {
			w, err := reg.Watch(ctx, membership.RoleQueryNode)
			if err != nil {
				return err
			}
			return qc.Run(ctx, w)
		},
		reload: func(ctx context.Context, reqs []querynode.LoadRequest) <-chan struct{} {
			done := make(chan struct{})
			var wg sync.WaitGroup
			for _, r := range reqs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// 0 replicas: as many as the stored placement has.
					if err := qc.Load(ctx, r.CollectionID, r.Partitions, 0, nil); err != nil && ctx.Err() == nil {
						logger.Warn("reloading a collection failed", "collection_id", r.CollectionID, "err", err)
					}
				}()
			}
			go func() { wg.Wait(); close(done) }()
			return done
		},
	}, nil
}

// coordView is the query coordinator as the state metrics read it. The
// service times (tsafe) are the query nodes' own: their processes export
// them.
type coordView struct{ qc *querycoord.Coordinator }

func (v coordView) Loaded(ctx context.Context, collectionID int64) (bool, []int64, error) {
	return v.qc.Loaded(ctx, collectionID)
}

func (v coordView) Segments(ctx context.Context, collectionID int64) ([]plan.SegmentInfo, error) {
	return v.qc.Segments(ctx, collectionID)
}
func (v coordView) ServiceTimes() map[string]uint64 { return map[string]uint64{} }

// allVChannels lists every vchannel of every collection (the channel
// balancer's channels). When the catalog cannot be read it answers the
// last list it read: an empty answer would read as every channel dropped.
func allVChannels(root *rootcoord.Core, logger *slog.Logger) func() []string {
	var (
		mu   sync.Mutex
		last []string
	)
	return func() []string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		mu.Lock()
		defer mu.Unlock()
		cols, err := root.AllCollections(ctx)
		if err != nil {
			logger.Warn("listing the vchannels failed; planning with the last list", "err", err)
			return last
		}
		out := []string{}
		for _, col := range cols {
			out = append(out, col.VChannels...)
		}
		last = out
		return out
	}
}
