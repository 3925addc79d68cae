// Package diskann is the DISKANN index: a single-layer proximity graph
// whose nodes (full vectors and neighbour lists) stay in the index file on
// local disk, searched with product-quantizer (PQ) codes of every vector
// held in memory. Only the file's header, PQ codebooks and codes are
// loaded; a search reads the record of each node it expands with one
// positioned read (pread, not a memory mapping, so the records never
// count towards the process's resident memory) and ranks the expanded
// nodes by the exact distance of the full vectors read with them.
//
// # Graph
//
// The graph is the bottom layer of an HNSW graph built by package hnsw
// over the full vectors (M = ceil(max_degree/2), so that layer 0 keeps up
// to max_degree links, efConstruction = search_list_size), pruned to the
// max_degree closest links where it keeps more. Its entry point is the
// medoid: the node closest to the mean of the vectors. Under COSINE the
// vectors are normalised first and scored by inner product.
//
// # Search
//
// A search keeps a candidate list of search_list nodes ordered by their
// PQ distance to the query (asymmetric distance tables, package quant),
// starts it with the medoid and repeatedly expands the best unexpanded
// candidate: it reads the node's record, scores its full vector exactly,
// and adds its unvisited neighbours to the list by PQ distance. When
// every candidate is expanded, the expanded nodes that the filter allows
// are ranked by exact distance. A filter that leaves at most search_list
// rows is answered exactly by reading those rows' records; one that
// leaves under a tenth of the rows, or a graph search that finds fewer
// than k allowed rows, scans the allowed rows' PQ codes and re-ranks the
// best search_list of them exactly.
//
// # File format, version 1
//
// The file is an indexfile envelope (magic "STRATA-DISKANN", 4-byte
// version 1, payload, CRC-32C of every preceding byte). Integers and
// floats are little-endian; offsets are from the start of the file.
//
//	offset  size               field
//	0       14                 magic "STRATA-DISKANN"
//	14      4                  version (1)
//	18      1                  metric (0 L2, 1 IP, 2 COSINE)
//	19      1                  PQ nbits (8)
//	20      4                  dim
//	24      8                  n, the number of rows (nodes)
//	32      4                  max_degree
//	36      4                  PQ m, the number of sub-spaces (divides dim)
//	40      4                  record size R in bytes
//	44      4                  medoid, the entry node
//	48      8                  records offset O (a multiple of 4096)
//	56      4*m*2^nbits*dim/m  PQ codebooks (float32), sub-space by sub-space
//	...     n*m                PQ codes, one byte per sub-space, row by row
//	...     ...                zero bytes up to O
//	O       n*R                node records, row i at O + i*R
//	O+n*R   4                  CRC-32C
//
// A node record holds the node's full vector (dim float32; normalised
// under COSINE), its degree d (uint32, at most max_degree), max_degree
// neighbour ids (uint32, the first d valid, each below n, the rest zero)
// and zero padding to R. R is the record's length rounded up to a power of
// two of at least 512 bytes while it fits a 4096-byte sector, and to a
// multiple of 4096 beyond, so that a record never straddles more sectors
// than its size needs and one node is one aligned read.
//
// Loading reads the file once from start to end: it keeps the header,
// codebooks and codes, checks every record (degree and neighbour ids) and
// the checksum, and then reads records only by position.
package diskann
