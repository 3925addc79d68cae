package coordrpc

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/rpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
)

// Config configures the coordinator clients.
type Config struct {
	// ClaimSlack is how much longer than its wait a claim's deadline is
	// when the caller's context has none: the wait travels to the
	// coordinator, and the call must outlive it.
	ClaimSlack time.Duration `json:"claimSlack"`
}

// Defaults returns the default client configuration: a claim may take 30
// seconds beyond its wait.
func Defaults() Config { return Config{ClaimSlack: 30 * time.Second} }

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.ClaimSlack <= 0 {
		return fmt.Errorf("coordrpc: claimSlack %s must be positive", c.ClaimSlack)
	}
	return nil
}

// DataCoord is a remote data coordinator as the nodes use it:
// querynode.Segments, datanode.Coord, datanode.IndexCoord and
// datanode.CompactionCoord.
type DataCoord struct {
	cfg Config
	c   coordv1.DataCoordServiceClient
}

// NewDataCoord returns a client of DataCoordService over conn.
func NewDataCoord(conn grpc.ClientConnInterface, cfg Config) (*DataCoord, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &DataCoord{cfg: cfg, c: coordv1.NewDataCoordServiceClient(conn)}, nil
}

// claimContext gives a claim its wait plus ClaimSlack when ctx has no
// deadline; a deadline the caller set stands (the claim then ends with the
// context's error, as in process).
func (d *DataCoord) claimContext(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, max(wait, 0)+d.cfg.ClaimSlack)
}

// Recovery returns a vchannel's recovery information.
func (d *DataCoord) Recovery(ctx context.Context, vchannel string) (catalog.RecoveryInfo, error) {
	resp, err := d.c.GetRecovery(ctx, &coordv1.GetRecoveryRequest{Vchannel: vchannel})
	if err != nil {
		return catalog.RecoveryInfo{}, err
	}
	return DecodeRecord[catalog.RecoveryInfo]("recovery info", resp.GetRecovery())
}

// Segment returns a segment's record (false when the coordinator has none).
func (d *DataCoord) Segment(ctx context.Context, id int64) (catalog.SegmentInfo, bool, error) {
	resp, err := d.c.GetSegment(ctx, &coordv1.GetSegmentRequest{SegmentId: id})
	if err != nil {
		return catalog.SegmentInfo{}, false, err
	}
	if !resp.GetFound() {
		return catalog.SegmentInfo{}, false, nil
	}
	info, err := DecodeRecord[catalog.SegmentInfo]("segment", resp.GetSegment())
	if err != nil {
		return catalog.SegmentInfo{}, false, err
	}
	return info, true, nil
}

// SegmentIndexes returns the finished index builds of a segment.
func (d *DataCoord) SegmentIndexes(ctx context.Context, segmentID int64) ([]catalog.IndexTask, error) {
	resp, err := d.c.ListSegmentIndexes(ctx, &coordv1.ListSegmentIndexesRequest{SegmentId: segmentID})
	if err != nil {
		return nil, err
	}
	return DecodeRecords[catalog.IndexTask]("index task", resp.GetTasks())
}

// Indexes returns the live indexes of a collection, by ID.
func (d *DataCoord) Indexes(ctx context.Context, collectionID int64) ([]catalog.IndexInfo, error) {
	resp, err := d.c.ListIndexes(ctx, &coordv1.ListIndexesRequest{CollectionId: collectionID})
	if err != nil {
		return nil, err
	}
	return DecodeRecords[catalog.IndexInfo]("index", resp.GetIndexes())
}

// WaitDropped returns the coordinator's drop generation once it differs
// from after, or when wait passes (querynode.DropWaiter): a query node in
// another process collects the mmap cache files of dropped data then.
func (d *DataCoord) WaitDropped(ctx context.Context, after uint64, wait time.Duration) (uint64, error) {
	ctx, cancel := d.claimContext(ctx, wait)
	defer cancel()
	resp, err := d.c.WaitDropped(ctx, &coordv1.WaitDroppedRequest{After: after, WaitMs: waitMillis(wait)})
	if err != nil {
		return 0, err
	}
	return resp.GetGeneration(), nil
}

// Synced reports a sync. It is sent once (rpc.NoRetry): the coordinator
// applies a report every time it receives it.
func (d *DataCoord) Synced(ctx context.Context, r catalog.SyncReport) error {
	b, err := EncodeRecord("sync report", r)
	if err != nil {
		return err
	}
	_, err = d.c.ReportSync(ctx, &coordv1.ReportSyncRequest{Report: b}, rpc.NoRetry())
	return err
}

// ClaimIndexTask claims an index build, waiting up to wait for one.
func (d *DataCoord) ClaimIndexTask(ctx context.Context, builder string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error) {
	ctx, cancel := d.claimContext(ctx, wait)
	defer cancel()
	resp, err := d.c.ClaimIndexTask(ctx, &coordv1.ClaimIndexTaskRequest{Builder: builder, WaitMs: waitMillis(wait)})
	if err != nil || !resp.GetClaimed() {
		return catalog.IndexTask{}, catalog.IndexInfo{}, false, err
	}
	task, err := DecodeRecord[catalog.IndexTask]("index task", resp.GetTask())
	if err != nil {
		return catalog.IndexTask{}, catalog.IndexInfo{}, false, err
	}
	idx, err := DecodeRecord[catalog.IndexInfo]("index", resp.GetIndex())
	if err != nil {
		return catalog.IndexTask{}, catalog.IndexInfo{}, false, err
	}
	return task, idx, true, nil
}

// FinishIndexTask records a build's outcome (buildErr travels as its
// message).
func (d *DataCoord) FinishIndexTask(ctx context.Context, buildID, version int64, files []string, size int64, buildErr error) error {
	_, err := d.c.FinishIndexTask(ctx, &coordv1.FinishIndexTaskRequest{
		BuildId: buildID, Version: version, Files: files, SizeBytes: size, BuildError: errorMessage(buildErr),
	})
	return err
}

// ClaimCompaction claims a compaction plan for executor, waiting up to
// wait for one.
func (d *DataCoord) ClaimCompaction(ctx context.Context, executor string, wait time.Duration) (catalog.CompactionPlan, bool, error) {
	ctx, cancel := d.claimContext(ctx, wait)
	defer cancel()
	resp, err := d.c.ClaimCompaction(ctx, &coordv1.ClaimCompactionRequest{Executor: executor, WaitMs: waitMillis(wait)})
	if err != nil || !resp.GetClaimed() {
		return catalog.CompactionPlan{}, false, err
	}
	p, err := DecodeRecord[catalog.CompactionPlan]("compaction plan", resp.GetPlan())
	if err != nil {
		return catalog.CompactionPlan{}, false, err
	}
	return p, true, nil
}

// CompleteCompaction commits a plan's result (execErr travels as its
// message).
func (d *DataCoord) CompleteCompaction(ctx context.Context, res catalog.CompactionResult, execErr error) error {
	b, err := EncodeRecord("compaction result", res)
	if err != nil {
		return err
	}
	_, err = d.c.CompleteCompaction(ctx, &coordv1.CompleteCompactionRequest{Result: b, ExecError: errorMessage(execErr)})
	return err
}

// RootCoord is a remote root coordinator as the nodes read it:
// querynode.Collections and datanode.Collections.
type RootCoord struct {
	c coordv1.RootCoordServiceClient
}

// NewRootCoord returns a client of RootCoordService over conn.
func NewRootCoord(conn grpc.ClientConnInterface) *RootCoord {
	return &RootCoord{c: coordv1.NewRootCoordServiceClient(conn)}
}

// CollectionByID returns a collection by ID (code 100 when there is none).
// It has no context: the call gets the transport's default deadline.
func (r *RootCoord) CollectionByID(id int64) (*catalog.Collection, error) {
	resp, err := r.c.GetCollection(context.Background(), &coordv1.GetCollectionRequest{CollectionId: id})
	if err != nil {
		return nil, err
	}
	return DecodeCollection(resp.GetCollection())
}

// AllCollections lists every collection of every database, by ID.
func (r *RootCoord) AllCollections(ctx context.Context) ([]*catalog.Collection, error) {
	resp, err := r.c.ListCollections(ctx, &coordv1.ListCollectionsRequest{})
	if err != nil {
		return nil, err
	}
	out := make([]*catalog.Collection, len(resp.GetCollections()))
	for i, b := range resp.GetCollections() {
		if out[i], err = DecodeCollection(b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ExpireBefore returns a collection's TTL cut-off (0 = none).
func (r *RootCoord) ExpireBefore(ctx context.Context, collectionID int64) (uint64, error) {
	resp, err := r.c.GetExpireBefore(ctx, &coordv1.GetExpireBeforeRequest{CollectionId: collectionID})
	if err != nil {
		return 0, err
	}
	return resp.GetExpireBefore(), nil
}

// Clock is the coordinator's ID allocator and pchannel ticks:
// datanode.Allocator and querynode.Ticker.
type Clock struct {
	c coordv1.ClockServiceClient
}

// NewClock returns a client of ClockService over conn.
func NewClock(conn grpc.ClientConnInterface) *Clock {
	return &Clock{c: coordv1.NewClockServiceClient(conn)}
}

// Allocate reserves n consecutive IDs and returns the first.
func (c *Clock) Allocate(ctx context.Context, n uint32) (uint64, error) {
	resp, err := c.c.AllocateIds(ctx, &coordv1.AllocateIdsRequest{Count: n})
	if err != nil {
		return 0, err
	}
	return resp.GetFirst(), nil
}

// AllocateTimestamps reserves n consecutive hybrid timestamps and returns
// the first.
func (c *Clock) AllocateTimestamps(ctx context.Context, n uint32) (uint64, error) {
	resp, err := c.c.AllocateTimestamps(ctx, &coordv1.AllocateTimestampsRequest{Count: n})
	if err != nil {
		return 0, err
	}
	return resp.GetFirst(), nil
}

// Tick makes a pchannel emit a time tick now and returns its timestamp.
func (c *Clock) Tick(ctx context.Context, pchannel string) (uint64, error) {
	resp, err := c.c.Tick(ctx, &coordv1.TickRequest{Pchannel: pchannel})
	if err != nil {
		return 0, err
	}
	return resp.GetTimestamp(), nil
}

// QueryCoord is a remote query coordinator as a proxy reads it:
// querycoord.LeaderSource.
type QueryCoord struct {
	c coordv1.QueryCoordServiceClient
}

// NewQueryCoord returns a client of QueryCoordService over conn.
func NewQueryCoord(conn grpc.ClientConnInterface) *QueryCoord {
	return &QueryCoord{c: coordv1.NewQueryCoordServiceClient(conn)}
}

// ShardLeaders returns where a loaded collection's reads go now (code 101
// when it is not loaded).
func (q *QueryCoord) ShardLeaders(ctx context.Context, collectionID int64) (plan.ShardLeaders, error) {
	resp, err := q.c.GetShardLeaders(ctx, &coordv1.GetShardLeadersRequest{CollectionId: collectionID})
	if err != nil {
		return plan.ShardLeaders{}, err
	}
	return decodeShardLeaders(resp)
}
