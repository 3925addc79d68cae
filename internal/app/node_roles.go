package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/membership"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	"github.com/strata-db/strata/internal/rpc/datanoderpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	datanodev1 "github.com/strata-db/strata/internal/rpcpb/strata/datanode/v1"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
	"github.com/strata-db/strata/internal/wal"
)

// queryNodeRole is a query node process's component: a query node reading
// the coordinator's metadata through coordrpc and serving
// QueryNodeService to the query coordinator. Its delegators pin the WAL
// they still have to replay in a local wal.Pins, which it reports to the
// coordinator every pinReportInterval once its session is registered
// (wal.RemotePins): the coordinator truncates behind them.
type queryNodeRole struct {
	qn *querynode.Node
	// workers holds the connections to the query nodes this one's shard
	// leaders read spread segments from (querynode.WorkerDialer).
	workers *rpc.Pool
	pins    *wal.Pins
	report  *coordrpc.WALPins
	logger  *slog.Logger
	// session receives the node's session once registered (joined).
	session chan membership.Node
}

// newQueryNodeRole builds a query node over the coordinator's clients.
func newQueryNodeRole(d nodeDeps) (nodeComponent, error) {
	data, err := coordrpc.NewDataCoord(d.coord, coordrpc.Defaults())
	if err != nil {
		return nil, err
	}
	root, clock := coordrpc.NewRootCoord(d.coord), coordrpc.NewClock(d.coord)
	// The pins only hold: this process truncates nothing (nil log).
	pins := wal.NewPins(nil)
	workers, err := rpc.NewPool(rpc.ClientDefaults(), d.logger.With("client", "workers"))
	if err != nil {
		return nil, err
	}
	qn := querynode.New(d.cfg.queryNode(), d.log, d.objects, data, root, clock, pins, d.logger)
	qn.SetWorkerDialer(func(_ int64, addr string) (querynode.SegmentReader, error) {
		conn, err := workers.Conn(addr)
		if err != nil {
			return nil, err
		}
		return queryrpc.NewClient(addr, conn, queryrpc.Defaults(), d.logger)
	})
	return &queryNodeRole{
		qn: qn, workers: workers,
		pins: pins, report: coordrpc.NewWALPins(d.coord), logger: d.logger, session: make(chan membership.Node, 1),
	}, nil
}

func (r *queryNodeRole) register(srv *grpc.Server) {
	querynodev1.RegisterQueryNodeServiceServer(srv, queryrpc.NewServer(r.qn, r.qn))
}

func (r *queryNodeRole) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.qn.Run(gctx) })
	g.Go(func() error { return r.reportPins(gctx) })
	return errors.Join(g.Wait(), r.workers.Close())
}

// reportPins reports the node's pins every pinReportInterval from the
// registration of its session until ctx ends. A failed report is retried
// at the next tick; meanwhile the coordinator holds the last one.
func (r *queryNodeRole) reportPins(ctx context.Context) error {
	var id int64
	select {
	case <-ctx.Done():
		return nil
	case n := <-r.session:
		id = n.ID
	}
	t := time.NewTicker(pinReportInterval)
	defer t.Stop()
	for {
		if err := r.report.Report(ctx, id, r.pins.Floors()); err != nil && ctx.Err() == nil {
			r.logger.Warn("querynode: report WAL pins failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (r *queryNodeRole) sources() []health.Source { return []health.Source{r.qn} }
func (r *queryNodeRole) loading() []string        { return r.qn.LoadingCollections() }

// joined starts the pin reports under the session's node ID.
func (r *queryNodeRole) joined(n membership.Node) {
	select {
	case r.session <- n:
	default: // joined once per process
	}
}

// dataNodeRole is a data node process's component: a data node in its
// watched mode (it consumes the vchannels the coordinator's channel
// balancer gives it, DataNodeService), reporting and claiming index
// builds and compactions through coordrpc. It claims only once its
// session is registered, under its executorName, so that the coordinator
// can take its claims back when the session ends.
type dataNodeRole struct {
	dn   *datanode.Node
	data *coordrpc.DataCoord
	// session receives the node's session once registered (joined).
	session chan membership.Node
}

// executorName is the builder and compaction executor name of a data node
// process: its membership node ID (never reused, so a restarted process
// holds none of its previous life's claims) and its address. The
// coordinator role derives the same name from the session of a node that
// died (releaseDeadExecutors).
func executorName(n membership.Node) string {
	return fmt.Sprintf("datanode-%d@%s", n.ID, n.Address)
}

// newDataNodeRole builds a watched data node over the coordinator's
// clients.
func newDataNodeRole(d nodeDeps) (nodeComponent, error) {
	data, err := coordrpc.NewDataCoord(d.coord, coordrpc.Defaults())
	if err != nil {
		return nil, err
	}
	root, clock := coordrpc.NewRootCoord(d.coord), coordrpc.NewClock(d.coord)
	cfg := d.cfg.dataNode()
	cfg.Watched = true
	dn, err := datanode.New(cfg, d.log, d.objects, data, root, clock, d.logger)
	if err != nil {
		return nil, err
	}
	return &dataNodeRole{dn: dn, data: data, session: make(chan membership.Node, 1)}, nil
}

func (r *dataNodeRole) register(srv *grpc.Server) {
	datanodev1.RegisterDataNodeServiceServer(srv, datanoderpc.NewServer(r.dn))
}

func (r *dataNodeRole) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.dn.Run(gctx) })
	g.Go(func() error {
		var name string
		select {
		case <-gctx.Done():
			return nil
		case n := <-r.session:
			name = executorName(n)
		}
		g.Go(func() error { return r.dn.RunCompactor(gctx, r.data, name) })
		return r.dn.RunIndexBuilder(gctx, r.data, name)
	})
	return g.Wait()
}
func (r *dataNodeRole) sources() []health.Source { return []health.Source{r.dn} }
func (r *dataNodeRole) loading() []string        { return []string{} }

// joined starts the claims under the session's executorName.
func (r *dataNodeRole) joined(n membership.Node) {
	select {
	case r.session <- n:
	default: // joined once per process
	}
}
