// Package index defines the vector-index port used by the query node: the
// Index interface that every approximate or exact vector index implements,
// the metrics it scores with and the shape of its results. Implementations
// live in sub-packages (hnsw, ivf).
package index

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"
	"unsafe"
)

// Metric is the similarity measure an index is built for.
type Metric int

const (
	// L2 scores by squared Euclidean distance; smaller is better.
	L2 Metric = iota
	// IP scores by inner product; larger is better.
	IP
	// Cosine scores by cosine similarity; larger is better.
	Cosine
	// Hamming scores binary vectors by the number of differing bits;
	// smaller is better.
	Hamming
	// Jaccard scores binary vectors by the Jaccard distance
	// 1 - |a AND b| / |a OR b|; smaller is better.
	Jaccard
)

// ParseMetric parses a Milvus metric type name: "L2", "IP", "COSINE",
// "HAMMING" or "JACCARD" (case-insensitive).
func ParseMetric(s string) (Metric, error) {
	switch strings.ToUpper(s) {
	case NameL2:
		return L2, nil
	case NameIP:
		return IP, nil
	case NameCosine:
		return Cosine, nil
	case NameHamming:
		return Hamming, nil
	case NameJaccard:
		return Jaccard, nil
	}
	return 0, fmt.Errorf("index: unsupported metric type %q", s)
}

// String returns the Milvus name of m ("L2", "IP", "COSINE", "HAMMING" or
// "JACCARD").
func (m Metric) String() string {
	switch m {
	case L2:
		return NameL2
	case IP:
		return NameIP
	case Cosine:
		return NameCosine
	case Hamming:
		return NameHamming
	case Jaccard:
		return NameJaccard
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// Valid reports whether m is one of the defined metrics.
func (m Metric) Valid() bool { return m >= L2 && m <= Jaccard }

// Float reports whether m is a metric over float vectors: L2, IP or COSINE.
func (m Metric) Float() bool { return m >= L2 && m <= Cosine }

// Binary reports whether m is a metric over packed binary vectors: HAMMING
// or JACCARD.
func (m Metric) Binary() bool { return m == Hamming || m == Jaccard }

// HigherIsBetter reports whether a larger score is a better match under m:
// true for IP and COSINE, false for L2, HAMMING and JACCARD.
func (m Metric) HigherIsBetter() bool { return m == IP || m == Cosine }

// Hit is one search result.
type Hit struct {
	// Row is the row number of the vector within the indexed segment, in
	// insertion order starting at 0.
	Row int32
	// Score is the score as Milvus reports it: the squared Euclidean
	// distance for L2 (smaller is better), the inner product for IP and the
	// cosine similarity for COSINE (larger is better), the number of
	// differing bits for HAMMING and the Jaccard distance for JACCARD
	// (smaller is better).
	Score float32
}

// SearchParams are the per-request tuning knobs of a search. A field an
// index does not use is ignored.
type SearchParams struct {
	// Ef is the HNSW search list size. Zero selects the index's default;
	// HNSW rejects a value smaller than k.
	Ef int
	// Nprobe is the number of inverted lists an IVF index scans. Zero
	// selects the index's default; IVF indexes reject values outside
	// [1, nlist].
	Nprobe int
	// RefineK multiplies k for the candidates a quantized index with a
	// refine store re-ranks with it (Milvus refine_k, >= 1; 0 selects 1).
	// Other indexes ignore it.
	RefineK float64
	// QueryBits is IVF_RABITQ's rbq_bits_query: the query is quantized to
	// that many bits per dimension (0, the default, keeps it exact). Other
	// indexes ignore it.
	QueryBits int
	// Allowed, when positive, is the number of true entries of the allowed
	// mask passed with these parameters, which a caller that keeps its mask
	// knows; 0 makes an index that needs the number count it (AllowedCount).
	Allowed int
}

// AllowedCount returns the number of rows the mask allowed admits: n (the
// index's rows) for a nil mask, params.Allowed when the caller gave it, and
// otherwise the true entries counted eight at a time (a Go bool is one
// byte holding 0 or 1, so the population count of eight bools read as a
// little-endian uint64 is the number of true ones).
func AllowedCount(allowed []bool, n int, params SearchParams) int {
	switch {
	case allowed == nil:
		return n
	case params.Allowed > 0:
		return params.Allowed
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(allowed))), len(allowed))
	c, i := 0, 0
	for ; i+8 <= len(b); i += 8 {
		c += bits.OnesCount64(binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < len(b); i++ {
		c += int(b[i])
	}
	return c
}

// Index is a vector index over the rows of one segment.
//
// Contract, which every implementation must honour:
//   - Search, Len, MemoryBytes and Marshal are safe for concurrent use.
//   - Search returns at most k hits, best first; hits with equal scores are
//     ordered by ascending Row. It returns fewer than k hits only when fewer
//     than k rows are indexed and allowed.
//   - allowed, when non-nil, has exactly Len() entries and a row is eligible
//     only if allowed[row] is true; nil allows every row. The index never
//     modifies it.
//   - q has the index's dimension; Search returns an error otherwise, and
//     for invalid parameters (k < 0, and index-specific ones such as HNSW's
//     ef < k or IVF's nprobe > nlist). k == 0 returns no hits and no error.
type Index interface {
	// Search returns the (approximate) k best rows for the query q.
	Search(q []float32, k int, params SearchParams, allowed []bool) ([]Hit, error)
	// Len returns the number of indexed rows.
	Len() int
	// MemoryBytes estimates the bytes of memory the index holds.
	MemoryBytes() int64
	// Marshal writes the index in the implementation's durable format.
	Marshal(w io.Writer) error
}

// RawVectors is implemented by an index that stores the vectors it was
// built from unchanged, row-major: a reader of the segment's vectors can
// be served from the index instead of a second copy (the query node's
// sealed segments hold each vector once this way). An index that keeps
// them otherwise (quantised, normalised for COSINE, grouped by list)
// returns nil.
type RawVectors interface {
	// RawVectors returns the Len() indexed vectors row-major (row i at
	// [i*dim:(i+1)*dim]), bit for bit as given to the build, or nil. The
	// caller must not modify them; they stay valid while the index lives.
	RawVectors() []float32
}

// BinaryIndex is a vector index over the packed binary vectors of one
// segment (BinaryVector fields, dim/8 bytes a row). It follows the contract
// of Index, with q holding the query's dim/8 bytes.
type BinaryIndex interface {
	// SearchBinary returns the (approximate) k best rows for the query q.
	SearchBinary(q []byte, k int, params SearchParams, allowed []bool) ([]Hit, error)
	// Len returns the number of indexed rows.
	Len() int
	// MemoryBytes estimates the bytes of memory the index holds.
	MemoryBytes() int64
	// Marshal writes the index in the implementation's durable format.
	Marshal(w io.Writer) error
}

// SortHits orders hits best first under m, breaking ties by ascending Row.
func SortHits(hits []Hit, m Metric) {
	if m.HigherIsBetter() {
		slices.SortFunc(hits, func(a, b Hit) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.Row, b.Row)
		})
		return
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Row, b.Row)
	})
}
