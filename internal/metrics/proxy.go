package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const proxySubsystem = "proxy"

// Proxy holds the request series of the proxy (Milvus proxy_metrics.go).
type Proxy struct {
	reqCount            *prometheus.CounterVec
	reqLatency          *prometheus.HistogramVec
	sqLatency           *prometheus.HistogramVec
	collSQLatency       *prometheus.HistogramVec
	mutationLatency     *prometheus.HistogramVec
	collMutationLatency *prometheus.HistogramVec
	receivedNQ          *prometheus.CounterVec
	searchVectors       *prometheus.CounterVec
	insertVectors       *prometheus.CounterVec
	upsertVectors       *prometheus.CounterVec
	deleteVectors       *prometheus.CounterVec
	slowQuery           *prometheus.CounterVec
	restCount           *prometheus.CounterVec
	restLatency         *prometheus.HistogramVec
	// flushReqs is the data node's flush request count: Milvus counts a
	// Flush where the data node receives it; standalone counts the API's.
	flushReqs *prometheus.CounterVec
}

// NewProxy registers the proxy series on reg.
func NewProxy(reg prometheus.Registerer) *Proxy {
	p := &Proxy{
		reqCount: counter(proxySubsystem, "req_count", "count of operation executed",
			nodeIDLabel, functionLabel, statusLabel, databaseLabel, collectionLabel),
		reqLatency: histogram(proxySubsystem, "req_latency", "latency of each request", msBuckets,
			nodeIDLabel, functionLabel),
		sqLatency: histogram(proxySubsystem, "sq_latency", "latency of search or query successfully", msBuckets,
			nodeIDLabel, queryTypeLabel, databaseLabel, collectionLabel),
		collSQLatency: histogram(proxySubsystem, "collection_sq_latency",
			"latency of search or query successfully, per collection", msBuckets,
			nodeIDLabel, queryTypeLabel, databaseLabel, collectionLabel),
		mutationLatency: histogram(proxySubsystem, "mutation_latency", "latency of insert or delete successfully",
			msBuckets, nodeIDLabel, msgTypeLabel, databaseLabel, collectionLabel),
		collMutationLatency: histogram(proxySubsystem, "collection_mutation_latency",
			"latency of insert or delete successfully, per collection", msBuckets,
			nodeIDLabel, msgTypeLabel, databaseLabel, collectionLabel),
		receivedNQ: counter(proxySubsystem, "received_nq", "counter of nq of received search and query requests",
			nodeIDLabel, queryTypeLabel, databaseLabel, collectionLabel),
		searchVectors: counter(proxySubsystem, "search_vectors_count", "counter of vectors successfully searched",
			nodeIDLabel, databaseLabel, collectionLabel),
		insertVectors: counter(proxySubsystem, "insert_vectors_count", "counter of vectors successfully inserted",
			nodeIDLabel, databaseLabel, collectionLabel),
		upsertVectors: counter(proxySubsystem, "upsert_vectors_count", "counter of vectors successfully upserted",
			nodeIDLabel, databaseLabel, collectionLabel),
		deleteVectors: counter(proxySubsystem, "delete_vectors_count", "counter of vectors successfully deleted",
			nodeIDLabel, databaseLabel, collectionLabel),
		slowQuery: counter(proxySubsystem, "slow_query_count", "count of slow query executed",
			nodeIDLabel, msgTypeLabel),
		restCount: counter(proxySubsystem, "restful_api_req_count", "count of operation executed",
			nodeIDLabel, "path"),
		restLatency: histogram(proxySubsystem, "restful_api_req_latency", "latency of each request", msBuckets,
			nodeIDLabel, "path"),
		flushReqs: counter("datanode", "flush_req_count", "count of flush request", nodeIDLabel, statusLabel),
	}
	reg.MustRegister(p.flushReqs, p.reqCount, p.reqLatency, p.sqLatency, p.collSQLatency, p.mutationLatency,
		p.collMutationLatency, p.receivedNQ, p.searchVectors, p.insertVectors, p.upsertVectors,
		p.deleteVectors, p.slowQuery, p.restCount, p.restLatency)
	return p
}

// Request is one finished proxy request as the metrics see it.
type Request struct {
	// Method is the RPC name ("Search", "Insert", …): the function_name label.
	Method string
	// DB and Collection label the request ("" when it names none).
	DB, Collection string
	// Failed is true when the request returned an error or a non-zero status.
	Failed  bool
	Latency time.Duration
	// NQ is the number of query vectors of a search (1 for a query).
	NQ int64
	// Rows is the number of rows a successful write inserted, upserted or deleted.
	Rows int64
	// Slow is true when the request took longer than the slow-request threshold.
	Slow bool
}

// Observe records a finished request: req_count (total and success or
// fail), and for successful requests their latency, and by kind the
// search/query or mutation latency and the vector counters.
func (p *Proxy) Observe(r Request) {
	p.reqCount.WithLabelValues(NodeID, r.Method, Total, r.DB, r.Collection).Inc()
	p.reqCount.WithLabelValues(NodeID, r.Method, status(r.Failed), r.DB, r.Collection).Inc()
	if r.Method == "Flush" || r.Method == "FlushAll" {
		p.flushReqs.WithLabelValues(NodeID, Total).Inc()
		p.flushReqs.WithLabelValues(NodeID, status(r.Failed)).Inc()
	}
	qt, mt := QueryType(r.Method), MutationType(r.Method)
	if qt != "" {
		p.receivedNQ.WithLabelValues(NodeID, qt, r.DB, r.Collection).Add(float64(max(r.NQ, 1)))
	}
	if r.Slow && (qt != "" || mt != "") {
		p.slowQuery.WithLabelValues(NodeID, qt+mt).Inc()
	}
	if r.Failed {
		return
	}
	l := ms(r.Latency)
	p.reqLatency.WithLabelValues(NodeID, r.Method).Observe(l)
	switch {
	case qt != "":
		p.sqLatency.WithLabelValues(NodeID, qt, r.DB, r.Collection).Observe(l)
		p.collSQLatency.WithLabelValues(NodeID, qt, r.DB, r.Collection).Observe(l)
		if qt != QueryLabel {
			p.searchVectors.WithLabelValues(NodeID, r.DB, r.Collection).Add(float64(r.NQ))
		}
	case mt != "":
		p.mutationLatency.WithLabelValues(NodeID, mt, r.DB, r.Collection).Observe(l)
		p.collMutationLatency.WithLabelValues(NodeID, mt, r.DB, r.Collection).Observe(l)
		var c *prometheus.CounterVec
		switch mt {
		case InsertLabel:
			c = p.insertVectors
		case UpsertLabel:
			c = p.upsertVectors
		default:
			c = p.deleteVectors
		}
		c.WithLabelValues(NodeID, r.DB, r.Collection).Add(float64(r.Rows))
	}
}

// ObserveREST records a REST v2 request on its path ("/v2/vectordb/entities/search").
func (p *Proxy) ObserveREST(path string, latency time.Duration) {
	p.restCount.WithLabelValues(NodeID, path).Inc()
	p.restLatency.WithLabelValues(NodeID, path).Observe(ms(latency))
}

// QueryType is the query_type label of a read method ("" for other methods).
func QueryType(method string) string {
	switch method {
	case "Search":
		return SearchLabel
	case "HybridSearch":
		return HybridSearchLabel
	case "Query":
		return QueryLabel
	}
	return ""
}

// MutationType is the msg_type label of a write method ("" for other methods).
func MutationType(method string) string {
	switch method {
	case "Insert":
		return InsertLabel
	case "Upsert":
		return UpsertLabel
	case "Delete":
		return DeleteLabel
	}
	return ""
}
