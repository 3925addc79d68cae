package coordrpc_test

import (
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/querycoord"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
)

// The clients are the nodes' roles.
var (
	_ querynode.Segments       = (*coordrpc.DataCoord)(nil)
	_ querynode.DropWaiter     = (*coordrpc.DataCoord)(nil)
	_ coordrpc.DropWatcher     = (*datacoord.Coordinator)(nil)
	_ datanode.Coord           = (*coordrpc.DataCoord)(nil)
	_ datanode.IndexCoord      = (*coordrpc.DataCoord)(nil)
	_ datanode.CompactionCoord = (*coordrpc.DataCoord)(nil)
	_ querynode.Collections    = (*coordrpc.RootCoord)(nil)
	_ datanode.Collections     = (*coordrpc.RootCoord)(nil)
	_ datanode.Allocator       = (*coordrpc.Clock)(nil)
	_ querynode.Ticker         = (*coordrpc.Clock)(nil)
	_ querycoord.LeaderSource  = (*coordrpc.QueryCoord)(nil)
	_ coordrpc.ShardLeaders    = (*querycoord.Coordinator)(nil)
	_ coordrpc.SegmentMeta     = (*datacoord.Coordinator)(nil)
	_ coordrpc.IndexMeta       = (*datacoord.Coordinator)(nil)
	_ coordrpc.SyncReporter    = (*datacoord.Coordinator)(nil)
	_ coordrpc.IndexBuilds     = (*datacoord.Coordinator)(nil)
	_ coordrpc.Compactions     = (*datacoord.Coordinator)(nil)
	_ coordrpc.Collections     = (*rootcoord.Core)(nil)
	_ coordrpc.IDAllocator     = (*tso.Allocator)(nil)
	_ coordrpc.Ticker          = (*wal.Writer)(nil)
)
