package app

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
)

// The decorators below record the Milvus event series and log lifecycle
// events around the calls that cross component boundaries, so that the
// components themselves stay free of metrics plumbing. Each embeds the
// interface it decorates: methods it does not override pass through.

// meteredQueryNode records milvus_querynode_sq_req_* for each search and
// query, and logs the start and end of each load.
type meteredQueryNode struct {
	proxy.QueryServer
	m      *metrics.QueryNode
	logger *slog.Logger
}

// Load implements proxy.QueryNode.
func (q meteredQueryNode) Load(ctx context.Context, collectionID int64, partitions []int64, replicaNumber int,
	resourceGroups []string,
) error {
	loaded, _, err := q.Loaded(ctx, collectionID)
	if err != nil {
		return err
	}
	if loaded {
		return q.QueryServer.Load(ctx, collectionID, partitions, replicaNumber, resourceGroups) // a change of partitions, or nothing
	}
	start := time.Now()
	q.logger.Info("loading collection", "collection", collectionID, "partitions", partitions)
	if err := q.QueryServer.Load(ctx, collectionID, partitions, replicaNumber, resourceGroups); err != nil {
		return err
	}
	segs, err := q.Segments(ctx, collectionID)
	if err != nil {
		q.logger.Info("collection loaded", "collection", collectionID, "took", time.Since(start).String(),
			"segments_err", err)
		return nil
	}
	var rows int64
	for _, s := range segs {
		rows += s.Rows
	}
	q.logger.Info("collection loaded", "collection", collectionID, "segments", len(segs), "rows", rows,
		"took", time.Since(start).String())
	return nil
}

// Search implements proxy.QueryNode.
func (q meteredQueryNode) Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	start := time.Now()
	res, err := q.QueryServer.Search(ctx, req)
	q.m.ObserveRequest(metrics.SearchLabel, req.CollectionID, err != nil, time.Since(start))
	return res, err
}

// Query implements proxy.QueryNode.
func (q meteredQueryNode) Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	start := time.Now()
	res, err := q.QueryServer.Query(ctx, req)
	q.m.ObserveRequest(metrics.QueryLabel, req.CollectionID, err != nil, time.Since(start))
	return res, err
}

// meteredSyncs records each data node sync (milvus_datanode_flush_buffer_op_count,
// flushed rows and bytes) and logs each segment the sync flushed.
type meteredSyncs struct {
	datanode.Coord
	m      *metrics.DataNode
	logger *slog.Logger
}

// Synced implements datanode.Coord.
func (s meteredSyncs) Synced(ctx context.Context, r catalog.SyncReport) error {
	err := s.Coord.Synced(ctx, r)
	if len(r.Segments) > 0 {
		var rows, size int64
		for _, seg := range r.Segments {
			rows += seg.Rows
			size += binlogBytes(seg.Binlogs) + binlogBytes(seg.Statslogs)
		}
		s.m.ObserveSync(metrics.SegmentLevel(catalog.LevelL1), rows, size, err != nil)
	}
	if r.L0 != nil {
		var size int64
		for _, b := range r.L0.Deltalogs {
			size += b.Size
		}
		s.m.ObserveSync(metrics.SegmentLevel(catalog.LevelL0), 0, size, err != nil)
	}
	if err != nil {
		return err
	}
	for _, seg := range r.Segments {
		if seg.Flushed {
			s.logger.Info("segment flushed", "segment", seg.SegmentID, "collection", seg.CollectionID,
				"partition", seg.PartitionID, "vchannel", r.VChannel)
		}
	}
	return nil
}

func binlogBytes(logs map[int64][]catalog.Binlog) int64 {
	var n int64
	for _, l := range logs {
		for _, b := range l {
			n += b.Size
		}
	}
	return n
}

// meteredObjects times the data node's writes of flushed files
// (milvus_datanode_save_latency, by file kind).
type meteredObjects struct {
	datanode.Objects
	m *metrics.DataNode
}

// Put implements datanode.Objects.
func (o meteredObjects) Put(ctx context.Context, key string, data []byte) error {
	start := time.Now()
	err := o.Objects.Put(ctx, key, data)
	if err == nil {
		if kind := fileKind(key); kind != "" {
			o.m.ObserveSave(kind, time.Since(start))
		}
	}
	return err
}

// fileKind is the msg_type of a flushed file's key ("" for other files).
func fileKind(key string) string {
	switch {
	case strings.Contains(key, "insert_log/"):
		return metrics.InsertLabel
	case strings.Contains(key, "delta_log/"):
		return metrics.DeleteLabel
	case strings.Contains(key, "stats_log/"):
		return "stats"
	}
	return ""
}

// meteredIndexBuilds records each index build's end
// (milvus_indexnode_index_task_count and build_index_latency).
type meteredIndexBuilds struct {
	datanode.IndexCoord
	m      *metrics.IndexNode
	mu     sync.Mutex
	starts map[int64]time.Time // by build ID
}

// ClaimIndexTask implements datanode.IndexCoord.
func (b *meteredIndexBuilds) ClaimIndexTask(ctx context.Context, builder string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error) {
	task, idx, ok, err := b.IndexCoord.ClaimIndexTask(ctx, builder, wait)
	if ok && err == nil {
		b.mu.Lock()
		b.starts[task.BuildID] = time.Now()
		b.mu.Unlock()
		// The builder logs the start ("index build started"), in every role.
	}
	return task, idx, ok, err
}

// FinishIndexTask implements datanode.IndexCoord.
func (b *meteredIndexBuilds) FinishIndexTask(ctx context.Context, buildID, version int64, files []string, size int64, buildErr error) error {
	b.mu.Lock()
	start, ok := b.starts[buildID]
	delete(b.starts, buildID)
	b.mu.Unlock()
	if ok {
		b.m.ObserveBuild(buildErr != nil, time.Since(start))
	}
	return b.IndexCoord.FinishIndexTask(ctx, buildID, version, files, size, buildErr)
}

// meteredCompactions records each compaction's latency
// (milvus_datanode_compaction_latency) and logs its start.
type meteredCompactions struct {
	datanode.CompactionCoord
	m      *metrics.DataNode
	logger *slog.Logger
	mu     sync.Mutex
	starts map[int64]compactionStart // by plan ID
}

type compactionStart struct {
	at  time.Time
	typ string
}

// ClaimCompaction implements datanode.CompactionCoord.
func (c *meteredCompactions) ClaimCompaction(ctx context.Context, executor string, wait time.Duration) (catalog.CompactionPlan, bool, error) {
	p, ok, err := c.CompactionCoord.ClaimCompaction(ctx, executor, wait)
	if ok && err == nil {
		c.mu.Lock()
		c.starts[p.ID] = compactionStart{at: time.Now(), typ: datacoord.MilvusCompactionType(p.Type)}
		c.mu.Unlock()
		c.logger.Info("compaction started", "plan", p.ID, "type", p.Type.String(), "collection", p.CollectionID,
			"vchannel", p.VChannel, "inputs", len(p.Inputs), "attempt", p.Attempt, "executor", executor)
	}
	return p, ok, err
}

// CompleteCompaction implements datanode.CompactionCoord.
func (c *meteredCompactions) CompleteCompaction(ctx context.Context, res catalog.CompactionResult, execErr error) error {
	c.mu.Lock()
	s, ok := c.starts[res.PlanID]
	delete(c.starts, res.PlanID)
	c.mu.Unlock()
	err := c.CompactionCoord.CompleteCompaction(ctx, res, execErr)
	if ok && execErr == nil && err == nil {
		c.m.ObserveCompaction(s.typ, time.Since(s.at))
	}
	return err
}

// observers builds the decorators over one set of metrics.
type observers struct {
	dn     *metrics.DataNode
	qn     *metrics.QueryNode
	index  *metrics.IndexNode
	logger *slog.Logger
}

// newObservers registers the Milvus event series and the state collector
// (over the root coordinator, data coordinator, query node and WAL) on reg.
func newObservers(reg prometheus.Registerer, root metrics.Collections, data *datacoord.Coordinator,
	qn metrics.QueryView, log metrics.WALEnds, logger *slog.Logger,
) *observers {
	reg.MustRegister(metrics.NewStateCollector(metrics.State{
		Collections: root, Data: data, Query: qn,
		Compactions: data, WAL: log,
	}))
	return &observers{
		dn: metrics.NewDataNode(reg), qn: metrics.NewQueryNode(reg), index: metrics.NewIndexNode(reg),
		logger: logger,
	}
}

func (o *observers) queryNode(q proxy.QueryServer) proxy.QueryServer {
	return meteredQueryNode{QueryServer: q, m: o.qn, logger: o.logger}
}

func (o *observers) dnCoord(c datanode.Coord) datanode.Coord {
	return meteredSyncs{Coord: c, m: o.dn, logger: o.logger}
}

func (o *observers) dnObjects(obj datanode.Objects) datanode.Objects {
	return meteredObjects{Objects: obj, m: o.dn}
}

func (o *observers) indexBuilds(c datanode.IndexCoord) datanode.IndexCoord {
	return &meteredIndexBuilds{IndexCoord: c, m: o.index, starts: map[int64]time.Time{}}
}

func (o *observers) compactions(c datanode.CompactionCoord) datanode.CompactionCoord {
	return &meteredCompactions{CompactionCoord: c, m: o.dn, logger: o.logger, starts: map[int64]compactionStart{}}
}
