// Package plan defines the read requests the proxy sends to query nodes and
// the results they return: search (top-k by vector distance) and query
// (filtered retrieval or count). Requests carry the filter as text plus
// template values; each query node compiles it against the collection schema.
package plan

import (
	"fmt"
	"slices"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index"
)

// Metric names (metric_type). The ones a vector index scores with are
// internal/index's names.
const (
	MetricL2     = index.NameL2
	MetricIP     = index.NameIP
	MetricCosine = index.NameCosine
	// MetricHamming and MetricJaccard score BinaryVector fields; smaller
	// is better.
	MetricHamming = index.NameHamming
	MetricJaccard = index.NameJaccard
	// MetricSubstructure and MetricSuperstructure are BIN_FLAT's structure
	// metrics (index.NameSubstructure): matches score 0, other rows are no
	// hits.
	MetricSubstructure   = index.NameSubstructure
	MetricSuperstructure = index.NameSuperstructure
	// MetricBM25 scores a BM25 function's output field (see Search.BM25);
	// larger is better.
	MetricBM25 = "BM25"
	// The MAX_SIM metrics score an embedding list (the query) against the
	// embedding list of a row (an ArrayOfVector field): for each query
	// vector the best match among the row's vectors, summed over the query
	// vectors. MAX_SIM_COSINE (alias MAX_SIM) and MAX_SIM_IP sum the
	// largest similarities (larger is better); MAX_SIM_L2 sums the smallest
	// squared L2 distances (smaller is better).
	MetricMaxSim       = "MAX_SIM"
	MetricMaxSimCosine = "MAX_SIM_COSINE"
	MetricMaxSimIP     = "MAX_SIM_IP"
	MetricMaxSimL2     = "MAX_SIM_L2"
)

// Read is what search and query have in common.
type Read struct {
	CollectionID int64
	// PartitionIDs restricts the read; empty means every loaded partition.
	PartitionIDs []int64
	// Filter is the boolean expression; empty matches everything.
	Filter    string
	Templates map[string]*schemapb.TemplateValue
	// Timezone is the IANA time zone that ISO literals without an offset
	// in Filter are read in ("" = UTC).
	Timezone string
	// OutputFields are the field IDs to return.
	OutputFields []int64
	// GuaranteeTS: the read waits until every vchannel has consumed up to it.
	// 0 means "now" (Strong consistency).
	GuaranteeTS uint64
	// Strong asks the node to make the channels tick so the read does not
	// wait for the periodic time tick.
	Strong bool
	// IgnoreGrowing reads only sealed segments, skipping the growing ones
	// (rows streamed since their segment was last handed off), as Milvus's
	// ignore_growing does.
	IgnoreGrowing bool
	// ExpireBefore is the collection's TTL cut-off (rows inserted before
	// it are invisible; 0 = no TTL) as the caller resolved it, when
	// HasExpireBefore; otherwise the query node resolves it itself. The
	// query coordinator sets it so that a remote query node need not ask
	// the coordinator back on every read.
	ExpireBefore    uint64
	HasExpireBefore bool
	// VChannels restricts the read to the node's delegators of these
	// vchannels (empty: every vchannel it serves for the collection); a
	// node without one of them fails the read with "channel not
	// available". The query coordinator sets it to the shards a node
	// leads, so a node that still holds a shard moved away (rebalance)
	// does not answer for it too.
	VChannels []string
	// Segments, when set, makes the read a shard leader's sub-read of the
	// sealed segments it gave a worker node (querynode): the worker reads
	// exactly these segments of its one vchannel (VChannels), at ReadTS,
	// and fails the read with "channel not available" when it does not
	// hold one of them, never answering without it.
	Segments []int64
	// ReadTS is the MVCC timestamp of a sub-read (with Segments): the
	// worker waits until it has consumed its vchannel up to it and reads
	// at exactly it, the leader's read timestamp.
	ReadTS uint64
}

// Search is a top-k vector search.
type Search struct {
	Read
	// FieldID is the vector field searched.
	FieldID int64
	Metric  string
	// Vectors are the nq query vectors (row-major, Dim each) of a search on a
	// FloatVector, Float16Vector, BFloat16Vector or Int8Vector field; the
	// proxy widens half-precision and int8 queries to float32.
	Vectors [][]float32
	// Binary are the nq packed query vectors (Dim/8 bytes each) of a search
	// on a BinaryVector field, whose Metric is HAMMING or JACCARD; Vectors
	// is then empty.
	Binary [][]byte
	// Sparse holds the nq query vectors of a search on a SparseFloatVector
	// field (Milvus wire rows, validated), in place of Vectors.
	Sparse [][]byte
	// BM25, when set, makes this a full-text search of a BM25 function's
	// output field (Metric is MetricBM25): Sparse then holds each query
	// text's term frequencies (token hash → count, as the function writes
	// rows), which the query node weighs by IDF over the collection's live
	// rows at the read timestamp.
	BM25 *BM25
	// EmbLists holds the nq queries of an embedding-list search on an
	// ArrayOfVector field (a MAX_SIM metric), in place of Vectors: query q
	// is EmbLists[q], one or more vectors of the field's dim back to back.
	EmbLists [][]float32
	// ElementLevel marks a search of plain query Vectors (metric L2, IP or
	// COSINE) on an ArrayOfVector field: each vector of a row's list is a
	// candidate on its own, so the hits of one query may repeat a primary
	// key (one hit per matching element, best first).
	ElementLevel bool
	// DropRatioSearch and RefineFactor tune sparse index searches
	// (0 = the index's defaults).
	DropRatioSearch float64
	RefineFactor    int
	// TopK is the number of hits per query, including Offset.
	TopK int
	// Ef is the HNSW search list size (0 = the index's default).
	Ef int
	// Nprobe is the number of lists an IVF index scans (0 = the index's
	// default).
	Nprobe int
	// RefineK multiplies TopK for the candidates a quantized index with a
	// refine store (HNSW_SQ, HNSW_PQ) re-ranks (0 = 1).
	RefineK float64
	// RbqBitsQuery is IVF_RABITQ's rbq_bits_query, the bits per dimension
	// of the quantized query (0 = exact).
	RbqBitsQuery int
	// Radius and RangeFilter bound the distance for range search (if HasRadius/HasRange).
	Radius      float64
	RangeFilter float64
	HasRadius   bool
	HasRange    bool
	// After, when HasAfter, keeps only hits strictly worse than this score
	// (search iterators page past the previous batch's last bound).
	After    float32
	HasAfter bool
	// GroupByField groups hits by a scalar field (0 = none), keeping up to
	// GroupSize hits in each of TopK groups.
	GroupByField int64
	GroupSize    int
	// StrictGroupSize drops groups that have fewer than GroupSize hits.
	StrictGroupSize bool
	// NullQueries[q], when set, marks query q of a search by primary key
	// whose row has a null vector: as in Milvus 2.6 it has no hits.
	NullQueries []bool
}

// BM25 holds the scoring parameters of a full-text search (the index's
// bm25_k1 and bm25_b).
type BM25 struct {
	K1, B float64
	// Stats, when set, are the statistics the query node weighs the
	// terms by instead of its own: the sum over the shard leaders of a
	// replica (the query coordinator gathers them with BM25Stats), so that
	// a search fanned out to several nodes scores as one node holding
	// every shard does.
	Stats *BM25Stats
}

// BM25Stats are the statistics of a full-text search over the live rows
// of the searched field that a node (or several, summed) holds at the
// read timestamp.
type BM25Stats struct {
	// Rows is the number of documents, TotalLen the sum of their lengths
	// (term counts).
	Rows     int64
	TotalLen float64
	// Terms are the query terms (token hashes), sorted and distinct;
	// DF[i] is the number of documents holding Terms[i].
	Terms []uint32
	DF    []int64
}

// Add sums o into s; both must be over the same terms.
func (s *BM25Stats) Add(o *BM25Stats) error {
	if !slices.Equal(s.Terms, o.Terms) || len(o.DF) != len(o.Terms) || len(s.DF) != len(s.Terms) {
		return fmt.Errorf("plan: BM25 statistics over different terms (%d and %d)", len(s.Terms), len(o.Terms))
	}
	s.Rows += o.Rows
	s.TotalLen += o.TotalLen
	for i, df := range o.DF {
		s.DF[i] += df
	}
	return nil
}

// NQ returns the number of query vectors: dense, binary or sparse.
func (s *Search) NQ() int { return len(s.Vectors) + len(s.Binary) + len(s.Sparse) + len(s.EmbLists) }

// Hit is one search result row.
type Hit struct {
	// PK is an int64 or a string.
	PK    any
	Score float32
	// Element is 1 + the offset of the matching element in the row's list
	// for a hit of an element-level search (Search.ElementLevel), else 0.
	Element int
}

// SearchResult holds hits for each query, best first.
type SearchResult struct {
	// Hits[q] are the hits of query q.
	Hits [][]Hit
	// Fields holds the output columns, rows aligned with the hits of all
	// queries concatenated in query order.
	Fields map[int64]column.Column
	// GroupValues holds the group-by value of each hit, when grouping.
	GroupValues column.Column
}

// Query is a filtered retrieval.
type Query struct {
	Read
	// Limit caps the rows returned (after Offset); 0 = no limit.
	Limit  int
	Offset int
	// CountOnly returns only the number of matching rows.
	CountOnly bool
}

// QueryResult holds the matching rows' output fields, or a count.
type QueryResult struct {
	Fields map[int64]column.Column
	Rows   int
	Count  int64
}

// HigherIsBetter reports whether larger scores are better for the metric.
func HigherIsBetter(metric string) bool {
	switch metric {
	case MetricIP, MetricCosine, MetricBM25, MetricMaxSim, MetricMaxSimCosine, MetricMaxSimIP:
		return true
	}
	return false
}

// SegmentInfo describes a segment a query node serves.
type SegmentInfo struct {
	ID          int64
	PartitionID int64
	Rows        int64
	Growing     bool
	Indexed     bool
	// Level is the compaction level (catalog.SegmentLevel numbering).
	Level int
	// NodeIDs are the query nodes that serve the segment, one per replica
	// (the query coordinator fills it; empty from a single query node).
	NodeIDs []int64
}

// Replica is where one replica of a loaded collection runs, as the query
// coordinator placed it (GetReplicas).
type Replica struct {
	// ID numbers the replica within its collection, from 1.
	ID int64
	// Nodes are the replica's query nodes, sorted.
	Nodes []int64
	// Leaders maps each vchannel (shard) to the node leading it.
	Leaders map[string]int64
	// Addresses maps each node of the replica to its internal RPC address.
	Addresses map[int64]string
	// ResourceGroup is the resource group the replica is loaded in.
	ResourceGroup string
	// Serving: reads may go to the replica (it has a leader for every
	// shard, each live, and no heal is pending). Set in ShardLeaders.
	Serving bool
}

// ShardLeaders is where the reads of a loaded collection go now: its
// replicas with their shard leaders and the leaders' addresses, as the
// query coordinator placed them (querycoord.Coordinator.ShardLeaders, and
// strata.coord.v1.QueryCoordService.GetShardLeaders across processes). A
// proxy caches it and sends reads to the leaders itself.
type ShardLeaders struct {
	// CollectionID and Name name the collection (Name for messages).
	CollectionID int64
	Name         string
	// PKField is the primary key's field ID: a query answered by several
	// leaders is merged in key order.
	PKField int64
	// Version changes whenever the placement does (a heal, a rebalance
	// move, a reload): a read that failed on a placement another version
	// replaced is tried again on the new one.
	Version uint64
	// TTL is the collection's time to live (0: none) when it was read; a
	// read's cut-off is catalog.ExpireBefore(TTL, now).
	TTL time.Duration
	// Replicas are the collection's replicas, by ID, each with Serving.
	Replicas []Replica
}
