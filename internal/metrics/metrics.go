package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every Milvus-named series.
const Namespace = "milvus"

// NodeID is the node_id label value of the standalone server (Milvus
// standalone numbers its single node 1).
const NodeID = "1"

// Status label values, as Milvus uses them: every request counts once with
// Total and once with Success or Fail.
const (
	Total   = "total"
	Success = "success"
	Fail    = "fail"
)

// Query and message type label values.
const (
	SearchLabel       = "search"
	QueryLabel        = "query"
	HybridSearchLabel = "hybrid_search"
	InsertLabel       = "insert"
	DeleteLabel       = "delete"
	UpsertLabel       = "upsert"
	AllLabel          = "all"
	// LeaderScope is the scope label of a query node request served by the
	// shard leader (every request in standalone).
	LeaderScope = "OnLeader"
	// StreamingSource is the data_source of rows flushed from the WAL.
	StreamingSource = "streaming"
)

// Label names (Milvus pkg/metrics).
const (
	nodeIDLabel       = "node_id"
	statusLabel       = "status"
	functionLabel     = "function_name"
	databaseLabel     = "db_name"
	collectionLabel   = "collection_name"
	collectionIDLabel = "collection_id"
	queryTypeLabel    = "query_type"
	msgTypeLabel      = "msg_type"
	channelLabel      = "channel_name"
	segStateLabel     = "segment_state"
	segLevelLabel     = "segment_level"
	indexStatusLabel  = "index_task_status"
	compactTypeLabel  = "compaction_type"
	dataSourceLabel   = "data_source"
	scopeLabel        = "scope"
	roleLabel         = "role_name"
	taskTypeLabel     = "task_type"
	taskStateLabel    = "task_state"
)

var (
	// msBuckets are Milvus's latency buckets in milliseconds (1 ms to ~131 s).
	msBuckets = prometheus.ExponentialBuckets(1, 2, 18)
	// longTaskBuckets are Milvus's buckets for long tasks (milliseconds).
	longTaskBuckets = []float64{
		1, 100, 500, 1000, 5000, 10000, 20000, 50000, 100000, 250000, 500000,
		1000000, 3600000, 5000000, 10000000,
	}
	// saveBuckets are Milvus's buckets of datanode save latency (milliseconds).
	saveBuckets = []float64{0, 10, 100, 200, 400, 1000, 10000}
)

// ms is d in (fractional) milliseconds, the unit of Milvus's latency histograms.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// status is the status label of an outcome.
func status(failed bool) string {
	if failed {
		return Fail
	}
	return Success
}

func counter(subsystem, name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: subsystem,
		Name: name, Help: help,
	}, labels)
}

func histogram(subsystem, name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Subsystem: subsystem,
		Name: name, Help: help, Buckets: buckets,
	}, labels)
}

// RegisterBuildInfo registers milvus_build_info, 1 with the build's
// version, build time and git commit as labels.
func RegisterBuildInfo(reg prometheus.Registerer, version, built, commit string) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "Build information of milvus",
	}, []string{"version", "built", "git_commit"})
	g.WithLabelValues(version, built, commit).Set(1)
	reg.MustRegister(g)
}
