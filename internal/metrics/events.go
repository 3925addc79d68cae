package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RootCoord holds the DDL series of the root coordinator (Milvus rootcoord_metrics.go).
type RootCoord struct {
	ddlCount   *prometheus.CounterVec
	ddlLatency *prometheus.HistogramVec
}

// NewRootCoord registers the root coordinator's event series on reg.
func NewRootCoord(reg prometheus.Registerer) *RootCoord {
	r := &RootCoord{
		ddlCount: counter("rootcoord", "ddl_req_count", "count of DDL operations", functionLabel, statusLabel),
		ddlLatency: histogram("rootcoord", "ddl_req_latency", "latency of each DDL operations", msBuckets,
			functionLabel),
	}
	reg.MustRegister(r.ddlCount, r.ddlLatency)
	return r
}

// ObserveDDL records a finished DDL request: its count (total and success
// or fail) and, when it succeeded, its latency.
func (r *RootCoord) ObserveDDL(method string, failed bool, latency time.Duration) {
	r.ddlCount.WithLabelValues(method, Total).Inc()
	r.ddlCount.WithLabelValues(method, status(failed)).Inc()
	if !failed {
		r.ddlLatency.WithLabelValues(method).Observe(ms(latency))
	}
}

// QueryNode holds the request series of the query node (Milvus querynode_metrics.go).
type QueryNode struct {
	sqCount   *prometheus.CounterVec
	sqLatency *prometheus.HistogramVec
}

// NewQueryNode registers the query node's event series on reg.
func NewQueryNode(reg prometheus.Registerer) *QueryNode {
	q := &QueryNode{
		sqCount: counter("querynode", "sq_req_count", "count of search / query request",
			nodeIDLabel, queryTypeLabel, statusLabel, scopeLabel, collectionIDLabel),
		sqLatency: histogram("querynode", "sq_req_latency", "latency of Search or query requests", msBuckets,
			nodeIDLabel, queryTypeLabel, scopeLabel),
	}
	reg.MustRegister(q.sqCount, q.sqLatency)
	return q
}

// ObserveRequest records a search or query the query node served
// (queryType SearchLabel or QueryLabel).
func (q *QueryNode) ObserveRequest(queryType string, collectionID int64, failed bool, latency time.Duration) {
	coll := strconv.FormatInt(collectionID, 10)
	q.sqCount.WithLabelValues(NodeID, queryType, Total, LeaderScope, coll).Inc()
	q.sqCount.WithLabelValues(NodeID, queryType, status(failed), LeaderScope, coll).Inc()
	if !failed {
		q.sqLatency.WithLabelValues(NodeID, queryType, LeaderScope).Observe(ms(latency))
	}
}

// DataNode holds the flush series of the data node (Milvus datanode_metrics.go).
type DataNode struct {
	flushOps      *prometheus.CounterVec
	flushedRows   *prometheus.CounterVec
	flushedSize   *prometheus.CounterVec
	saveLatency   *prometheus.HistogramVec
	compactionLat *prometheus.HistogramVec
}

// NewDataNode registers the data node's event series on reg.
func NewDataNode(reg prometheus.Registerer) *DataNode {
	d := &DataNode{
		flushOps: counter("datanode", "flush_buffer_op_count", "count of flush buffer operations",
			nodeIDLabel, statusLabel, segLevelLabel),
		flushedRows: counter("datanode", "flushed_data_rows", "num of rows flushed to storage",
			nodeIDLabel, dataSourceLabel),
		flushedSize: counter("datanode", "flushed_data_size", "byte size of data flushed to storage",
			nodeIDLabel, dataSourceLabel, segLevelLabel),
		saveLatency: histogram("datanode", "save_latency", "latency of saving flush data to storage",
			saveBuckets, nodeIDLabel, msgTypeLabel),
		compactionLat: histogram("datanode", "compaction_latency", "latency of compaction operation",
			longTaskBuckets, nodeIDLabel, compactTypeLabel),
	}
	reg.MustRegister(d.flushOps, d.flushedRows, d.flushedSize, d.saveLatency, d.compactionLat)
	return d
}

// ObserveSync records one sync the data coordinator accepted or refused:
// a flush buffer operation of the segment level ("L0", "L1"), with the
// rows and bytes it wrote when it succeeded.
func (d *DataNode) ObserveSync(level string, rows, bytes int64, failed bool) {
	d.flushOps.WithLabelValues(NodeID, status(failed), level).Inc()
	if failed {
		return
	}
	d.flushedRows.WithLabelValues(NodeID, StreamingSource).Add(float64(rows))
	d.flushedSize.WithLabelValues(NodeID, StreamingSource, level).Add(float64(bytes))
}

// ObserveSave records the latency of writing one flushed file to object
// storage; kind is the file kind ("insert", "delete", "stats").
func (d *DataNode) ObserveSave(kind string, latency time.Duration) {
	d.saveLatency.WithLabelValues(NodeID, kind).Observe(ms(latency))
}

// ObserveCompaction records a finished compaction of type typ.
func (d *DataNode) ObserveCompaction(typ string, latency time.Duration) {
	d.compactionLat.WithLabelValues(NodeID, typ).Observe(ms(latency))
}

// IndexNode holds the index build series (Milvus indexnode metrics in datanode_metrics.go).
type IndexNode struct {
	tasks   *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

// NewIndexNode registers the index build series on reg.
func NewIndexNode(reg prometheus.Registerer) *IndexNode {
	n := &IndexNode{
		tasks: counter("indexnode", "index_task_count", "number of tasks that index node received",
			nodeIDLabel, statusLabel),
		latency: histogram("indexnode", "build_index_latency", "latency of build index for segment",
			longTaskBuckets, nodeIDLabel),
	}
	reg.MustRegister(n.tasks, n.latency)
	return n
}

// ObserveBuild records a finished index build.
func (n *IndexNode) ObserveBuild(failed bool, latency time.Duration) {
	n.tasks.WithLabelValues(NodeID, Total).Inc()
	n.tasks.WithLabelValues(NodeID, status(failed)).Inc()
	if !failed {
		n.latency.WithLabelValues(NodeID).Observe(ms(latency))
	}
}

// Kinds of released claims (TaskRelease).
const (
	// ReleasedIndex labels index builds released from a dead builder.
	ReleasedIndex = "index"
	// ReleasedCompaction labels compaction plans released from a dead executor.
	ReleasedCompaction = "compaction"
)

// TaskRelease counts the claims the coordinator role took back from data
// nodes whose session ended (strata_datacoord_tasks_released_total; a
// Strata series, Milvus has none).
type TaskRelease struct {
	released *prometheus.CounterVec
}

// NewTaskRelease registers the release series on reg.
func NewTaskRelease(reg prometheus.Registerer) *TaskRelease {
	r := &TaskRelease{released: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strata_datacoord_tasks_released_total",
		Help: "index builds and compaction plans taken back from data nodes whose session ended",
	}, []string{"kind"})}
	reg.MustRegister(r.released)
	return r
}

// ObserveRelease records n claims of kind (ReleasedIndex, ReleasedCompaction) released.
func (r *TaskRelease) ObserveRelease(kind string, n int) {
	r.released.WithLabelValues(kind).Add(float64(n))
}
