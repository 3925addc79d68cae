// Package hnsw implements the Hierarchical Navigable Small World graph index
// (Malkov and Yashunin, 2016) over float32 vectors for the L2, IP and COSINE
// metrics. It implements index.Index.
//
// # Graph
//
// Every row gets a level drawn from floor(-ln(U)/ln(M)), with U derived
// from a hash of Config.Seed and the row number; it is linked on layers 0 to
// its level. Layer 0 keeps up to 2*M links per node, upper layers up to M.
// Inserts descend greedily from the entry point to the node's level, then run
// a beam search of width EfConstruction on each lower layer and pick links
// with the paper's neighbour-selection heuristic (a candidate is kept only if
// it is closer to the new node than to every link kept so far). Neighbours
// whose lists overflow are shrunk with the same heuristic.
//
// COSINE stores unit-length vectors and normalises the query, so it searches
// by inner product. Internally distances are "smaller is better" (L2 squared,
// or the negated inner product); Search converts them back to Milvus scores.
//
// # Memory layout
//
// Vectors are one flat []float32. Layer-0 links are one flat []uint32 with a
// fixed block of 1+2*M words per node (a count, then ids), so a node's links
// are found by multiplication; upper-layer blocks live in a second flat array
// addressed through a per-node offset. Searches draw their working memory
// (a generation-counted visited array, two binary heaps without interface
// boxing) from a sync.Pool, so a search allocates only its result slice.
//
// # Concurrency
//
// Search, Len, MemoryBytes and Marshal take a read lock and may run
// concurrently. Add takes the write lock and inserts with Config.Workers
// goroutines, which it starts and joins before returning. While building,
// every read or write of a node's link block happens under that node's
// mutex, and the entry point under a separate mutex. A build with
// Workers == 1 is deterministic.
//
// Build and Add take a context: every worker checks it every 64 inserts,
// so a cancelled build (a shutdown) returns ctx.Err() within milliseconds;
// the partly built index is discarded.
//
// # Filtered search
//
// With an allowed mask the layer-0 walk expands disallowed nodes too (they
// route the search) but admits only allowed nodes to the result list, and it
// does not stop before it holds ef allowed nodes, so it returns k hits
// whenever k rows are allowed. When few rows are allowed this walk visits
// most of the graph, so Search scans the allowed rows exactly instead when
// the cost model says the scan is cheaper (see plan). A walk that ends with
// fewer than min(k, allowed) results also falls back to the exact scan. The
// scan reads the mask eight rows at a time and prefetches the allowed rows'
// vectors.
//
// # Huge pages
//
// The vectors and layer-0 links are read at random by every walk; Build
// and Unmarshal ask Linux for transparent huge pages under them (a hint,
// see adviseHuge) so that those reads do not also miss the TLB.
//
// # Quantized indexes (HNSW_SQ, HNSW_PQ)
//
// With Config.Quant set, Build builds the graph on the exact float32
// vectors as above, then encodes them (quant.go) and drops the float32
// copy: SQ8 and SQ6 (per-dimension minimum and scale over the rows, 256 or
// 64 levels, one byte per dimension), FP16 and BF16 (two bytes per
// dimension) or PQ (m sub-vectors, each replaced by the index of the
// nearest of 2^nbits codewords trained by k-means on a sample; one byte
// per sub-vector). Building on exact vectors gives the graph of plain HNSW,
// so quantization costs only the accuracy of the distances a search
// computes. A search prepares the query once per call (SQ: the query
// offset by the minimum, or scaled for IP; PQ: the m×2^nbits table of
// query-to-codeword distances, the asymmetric distance of faiss) and walks
// the same graph scoring codes.
//
// With QuantConfig.Refine a second store keeps the vectors in RefineType
// (FP32, FP16, BF16, SQ8 or SQ6). A search then collects
// ceil(k×refine_k) candidates (SearchParams.RefineK, Milvus refine_k; ef is
// raised to that many) by quantized distance, re-scores them with the
// refine store and returns the best k, with the refined scores: exact
// with FP32. Without a refine store, scores are quantized distances.
//
// A quantized index takes no rows after Build. RawVectors returns its FP32
// refine store (the vectors bit for bit, except under COSINE) or nil, so a
// sealed segment keeps its own column otherwise.
//
// # Serialized format
//
// Marshal writes a versioned little-endian format with a CRC-32C trailer; the
// layout is documented next to Marshal in marshal.go, and that of a
// quantized index (magic STRHNSWQ, read by UnmarshalQuantized) in
// marshal_quant.go. Unmarshal checks the
// checksum and every link, and wraps ErrCorrupt for malformed input.
package hnsw
