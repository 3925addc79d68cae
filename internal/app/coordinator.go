package app

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/membership"
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

// The coordinator role truncates the WAL behind the channel checkpoints
// and behind the pins of the query node processes (wal.RemotePins): each
// reports, every pinReportInterval, the lowest offset it still needs per
// pchannel (WALPinService), held while its session lives; a recovery read
// (GetRecovery, where a replay starts) holds its pchannel for pinGrace, so
// the start is held until the reader's next report covers it.
const (
	pinReportInterval = time.Second
	pinGrace          = 10 * time.Second
)

// heldRecovery is the data coordinator's segments as the nodes read them,
// with every recovery read holding its pchannel (wal.RemotePins.Hold) from
// before the read until pinGrace after it.
type heldRecovery struct {
	coordrpc.SegmentMeta
	pins *wal.RemotePins
}

// Recovery implements coordrpc.SegmentMeta.
func (h heldRecovery) Recovery(ctx context.Context, vchannel string) (catalog.RecoveryInfo, error) {
	id := h.pins.Hold(wal.PChannelOf(vchannel))
	rec, err := h.SegmentMeta.Recovery(ctx, vchannel)
	h.pins.HoldAt(id, rec.SeekOffset) // on an error, 0 held for pinGrace
	return rec, err
}

// followQueryNodes keeps pins' live set to the querynode sessions until
// ctx ends.
func followQueryNodes(ctx context.Context, reg *membership.Registry, pins *wal.RemotePins) error {
	w, err := reg.Watch(ctx, membership.RoleQueryNode)
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(w.Nodes))
	for _, n := range w.Nodes {
		ids = append(ids, n.ID)
	}
	pins.SetLive(ids)
	for ev := range w.Events {
		switch ev.Type {
		case membership.Added:
			pins.NodeJoined(ev.Node.ID)
		case membership.Removed:
			pins.NodeLeft(ev.Node.ID)
		case membership.Updated:
		}
	}
	return w.Err()
}

// registerCoordServices serves what the node processes ask of the
// coordinators (strata.coord.v1): the data coordinator's segments,
// indexes, syncs, builds and compactions (the syncs, builds and
// compactions through the observers that meter them, as in process), the
// root coordinator's collections, the ID allocator, the WAL writer's
// ticks and the query nodes' WAL pins; and what a proxy process asks of
// the query coordinator (leaders: the shard leaders of loaded
// collections).
func registerCoordServices(srv *grpc.Server, data *datacoord.Coordinator, root *rootcoord.Core, ids, clock *tso.Allocator,
	writer *wal.Writer, pins *wal.RemotePins, om *observers, leaders coordrpc.ShardLeaders,
) {
	coordv1.RegisterDataCoordServiceServer(srv, coordrpc.NewDataCoordServer(heldRecovery{data, pins}, data, om.dnCoord(data),
		om.indexBuilds(data), om.compactions(data)))
	coordv1.RegisterWALPinServiceServer(srv, coordrpc.NewWALPinServer(pins))
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
