package app

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	"github.com/strata-db/strata/internal/rpc/datanoderpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
)

// The coordinator role (`strata run coordinator`): the root, data and
// query coordinators and the proxy in one process, the data and query
// nodes in their own (docs/design/cluster.md, "Roles").

// keepWAL is the coordinator role's WAL truncation: none. Truncating
// behind the channel checkpoints is safe only when every WAL reader that
// may still be behind them pins its offset (wal.Pins), and the query nodes
// replaying the WAL run in other processes, which cannot pin it yet; so the
// WAL is kept whole, as Milvus keeps its message queue, and its retention
// is the operator's (Kafka's retention.ms on the topics).
type keepWAL struct{}

// Truncate implements datacoord.Truncater: it keeps everything.
func (keepWAL) Truncate(context.Context, string, int64) error { return nil }

var _ datacoord.Truncater = keepWAL{}

// registerCoordServices serves what the node processes ask of the
// coordinators (strata.coord.v1): the data coordinator's segments,
// indexes, syncs, builds and compactions (the syncs, builds and
// compactions through the observers that meter them, as in process), the
// root coordinator's collections, the ID allocator and the WAL writer's
// ticks; and what a proxy process asks of the query coordinator
// (leaders: the shard leaders of loaded collections).
func registerCoordServices(srv *grpc.Server, data *datacoord.Coordinator, root *rootcoord.Core, ids, clock *tso.Allocator,
	writer *wal.Writer, om *observers, leaders coordrpc.ShardLeaders,
) {
	coordv1.RegisterDataCoordServiceServer(srv, coordrpc.NewDataCoordServer(data, data, om.dnCoord(data),
		om.indexBuilds(data), om.compactions(data)))
	coordv1.RegisterRootCoordServiceServer(srv, coordrpc.NewRootCoordServer(root))
	coordv1.RegisterClockServiceServer(srv, coordrpc.NewClockServer(ids, clock, writer))
	coordv1.RegisterQueryCoordServiceServer(srv, coordrpc.NewQueryCoordServer(leaders))
}

// newChannelBalancer places the vchannels of every collection on the data
// node processes (placement.ChannelBalancer), telling them through their
// DataNodeService with the release handshake and the fence
// (placement.ChannelApplier).
func newChannelBalancer(meta metastore.KV, data *datacoord.Coordinator, root *rootcoord.Core, pool *rpc.Pool,
	logger *slog.Logger,
) (*placement.ChannelBalancer, error) {
	logger = logger.With("component", "channels")
	dial := func(addr string) (placement.ChannelOwner, error) {
		conn, err := pool.Conn(addr)
		if err != nil {
			return nil, err
		}
		return datanoderpc.NewClient(addr, conn, logger), nil
	}
	applier, err := placement.NewChannelApplier(placement.DefaultApplierConfig(), dial, data, logger)
	if err != nil {
		return nil, err
	}
	return placement.NewChannelBalancer(placement.DefaultBalancerConfig(), placement.NewStore(meta),
		allVChannels(root, logger), data, applier.Apply, logger)
}
